import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { BenchResults } from "../../../bench/report/benchResults.js";
import { renderReport, summaryTable } from "../../../bench/report/markdown.js";
import type { HotPathAllocation, HotPathResult } from "../../../bench/sections/hotPath.js";

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

  it("reports the hot path's allocation per transaction when the run sampled it, and not before", () => {
    const before = JSON.parse(
      readFileSync(new URL("../../../bench/results/2026-12-02c.json", import.meta.url), "utf8"),
    ) as BenchResults & { hotPath: HotPathResult };
    expect(renderReport(before, "run").markdown).not.toContain("allocated per transaction");
    const allocation: HotPathAllocation = {
      transactions: 50_000,
      samplingIntervalBytes: 16_384,
      bytesPerTransaction: 14_336,
      topSites: [{ name: "advanceCardState", where: "src/features/cardState.ts:1", selfPercent: 7 }],
      owners: { "src/features": 22.8 },
    };
    const sampled = {
      ...before,
      hotPath: { ...before.hotPath, drain: { ...before.hotPath.drain, allocation } },
    };
    const { markdown } = renderReport(sampled, "run");
    expect(markdown).toContain("**14.0 KiB allocated per transaction**");
    expect(markdown).toContain("| `advanceCardState` | src/features/cardState.ts:1 | 7 |");
    expect(summaryTable(sampled)).toContain("; 14.0 KiB allocated per transaction");
  });
});
