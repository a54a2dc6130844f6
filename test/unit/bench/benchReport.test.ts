import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { BenchResults } from "../../../bench/report/benchResults.js";
import { renderReport, summaryTable } from "../../../bench/report/markdown.js";

const committed = JSON.parse(
  readFileSync(new URL("../../../bench/results/2026-11-29.json", import.meta.url), "utf8"),
) as BenchResults;

describe("the bench report", () => {
  it("has one chapter per section, in order, each with its charts", () => {
    const { markdown, charts } = renderReport(committed, "run");
    const headings = markdown.split("\n").filter((line) => line.startsWith("## "));
    expect(headings).toEqual([
      "## Summary",
      "## 1. End to end",
      "## 2. Decode",
      "## 3. Batching",
      "## 4. State",
      "## 5. Model",
      "## 6. Ceiling",
      "## 7. Cold start",
    ]);
    expect([...charts.keys()].sort()).toEqual(
      ["batching", "ceiling", "cold-start", "decode", "end-to-end", "model", "stages", "state"].map(
        (name) => `run-${name}.svg`,
      ),
    );
    for (const file of charts.keys()) expect(markdown).toContain(`(${file})`);
  });

  it("says which section did not complete and leaves it out of the summary", () => {
    const broken = { ...committed, decode: { error: "decoder crashed" } } as BenchResults;
    const { markdown, charts } = renderReport(broken, "run");
    expect(markdown).toContain("## 2. Decode\n\n_Did not complete: decoder crashed_");
    expect(charts.has("run-decode.svg")).toBe(false);
    expect(summaryTable(broken)).not.toContain("2. Decode");
    expect(summaryTable(committed)).toContain("2. Decode");
  });
});
