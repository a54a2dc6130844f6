import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { BenchResults } from "../../../bench/report/benchResults.js";
import { renderReport, summaryTable } from "../../../bench/report/markdown.js";
import { fmt } from "../../../bench/report/reportFormat.js";
import type { CeilingResult } from "../../../bench/sections/ceiling.js";
import type { ModelResult, StepAfterIdle } from "../../../bench/sections/model.js";
import {
  UNNAMED_NATIVE,
  summariseProfile,
  type HotPathAllocation,
  type HotPathIssuerScaleDrain,
  type HotPathResult,
  type HotPathSteadyProfile,
} from "../../../bench/sections/hotPath.js";

const committed = JSON.parse(
  readFileSync(new URL("../../../bench/results/2026-11-29.json", import.meta.url), "utf8"),
) as BenchResults;

/** A committed full run from before the allocation pass and the steady profile. */
const runBeforeTheProfiles = () =>
  JSON.parse(
    readFileSync(new URL("../../../bench/results/2026-12-02c.json", import.meta.url), "utf8"),
  ) as BenchResults & { hotPath: HotPathResult };

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
    const before = runBeforeTheProfiles();
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

  it("reports the drain at an issuer's scale beside the headline drain when the run took it, and not before", () => {
    const before = runBeforeTheProfiles();
    expect(renderReport(before, "run").markdown).not.toContain("At an issuer's scale");
    const issuerScale: HotPathIssuerScaleDrain = {
      cards: 214_871,
      cardVariants: 43,
      blockTransactions: 4_997,
      cachedCards: 100_000,
      transactions: 100_000,
      reads: { fromMemory: 25_000, found: 75_000, absent: 0 },
      transactionsPerSecond: 26_382,
      cpuUsPerTransaction: 2 * before.hotPath.drain.cpuUsPerTransaction,
      redisCpuUsPerTransaction: 30,
      modelShare: 1,
    };
    const atScale = {
      ...before,
      hotPath: {
        ...before.hotPath,
        drain: {
          ...before.hotPath.drain,
          redisCpuUsPerTransaction: 20,
          reads: { fromMemory: 199_000, found: 0, absent: 1_000 },
          issuerScale,
        },
      },
    };
    const { markdown } = renderReport(atScale, "run");
    expect(markdown).toContain("the same drain over 214871 cards, more than serve keeps in memory");
    expect(markdown).toContain("25.0 % were served from memory, 75.0 % fetched from Redis, the MAC verified");
    expect(markdown).toContain(
      "(in the drain above: 99.50 % were served from memory, 0.0 % fetched from Redis and 0.5 % had no state yet)",
    );
    expect(markdown).toContain(`(×2.00 the drain above)`);
    expect(markdown).toContain("30 µs of its own per transaction (×1.50)");
    expect(summaryTable(atScale)).toContain(
      "8. Hot path: the same drain over 214871 cards (serve keeps 100000 in memory)",
    );
  });

  it("reports a steady run's profile when the run took one, and not before", () => {
    const before = runBeforeTheProfiles();
    expect(renderReport(before, "run").markdown).not.toContain("Where a steady rate's CPU goes");
    const steadyProfile: HotPathSteadyProfile = {
      rate: 1000,
      seconds: 20,
      samplingIntervalUs: 1000,
      busyPercent: 14.2,
      topFrames: [
        { name: "(anonymous)", where: "native, from step src/model/onnxStepSession.ts:1", selfPercent: 21.3 },
      ],
      owners: { "src/model": 29 },
    };
    const profiled = { ...before, hotPath: { ...before.hotPath, steadyProfile } };
    const { markdown } = renderReport(profiled, "run");
    expect(markdown).toContain("The main thread was busy in 14.2 % of the samples");
    expect(markdown).toContain("| `(anonymous)` | native, from step src/model/onnxStepSession.ts:1 | 21.3 |");
    expect(summaryTable(profiled)).toContain("where the main thread's time goes at 1000 tx/s");
  });

  /** The committed run with its ceiling section changed as given. */
  const committedCeiling = committed.ceiling as CeilingResult;
  const withCeiling = (changes: Partial<CeilingResult>) =>
    ({ ...committed, ceiling: { ...committedCeiling, ...changes } }) as BenchResults;

  it("sets a model step after an idle gap beside one back to back when the run measured it, and not before", () => {
    const before = renderReport(committed, "run").markdown;
    expect(before).not.toContain("back to back (the last of 10)");
    const model = committed.model as ModelResult;
    const afterIdle = (afterSleepOverBackToBack: number, afterSpinOverBackToBack: number): StepAfterIdle => ({
      batchSize: 20,
      gapMs: 20,
      samples: 200,
      backToBackCpuUs: 33,
      afterSleepCpuUs: 33 * afterSleepOverBackToBack,
      afterSpinCpuUs: 33 * afterSpinOverBackToBack,
      afterSleepOverBackToBack,
      afterSpinOverBackToBack,
    });
    const rendered = (a: StepAfterIdle) =>
      renderReport({ ...committed, model: { ...model, afterIdle: a } }, "run");
    const { markdown } = rendered(afterIdle(7.71, 7.24));
    expect(markdown).toContain("| after 20 ms asleep | 254 | ×7.71 |");
    expect(markdown).toContain("| after 20 ms spinning (a JavaScript loop) | 239 | ×7.24 |");
    expect(markdown).toContain("even when the thread stayed busy on its core");
    expect(summaryTable({ ...committed, model: { ...model, afterIdle: afterIdle(7.71, 7.24) } })).toContain(
      "after the gap ×7.71 asleep, ×7.24 spinning",
    );
    expect(rendered(afterIdle(7.71, 1.05)).markdown).toContain("it is the thread having slept");
    expect(rendered(afterIdle(1.1, 1.05)).markdown).toContain("cost about what one back to back does.");
  });

  it("sets each drain's CPU per record beside its throughput when the run measured it, and not before", () => {
    const before = committedCeiling;
    expect(renderReport(committed, "run").markdown).not.toContain("CPU µs / record");
    const measured = withCeiling({
      scorer: { ...before.scorer, cpuUsPerRecord: 40.5 },
      passthrough: { ...before.passthrough, cpuUsPerRecord: 9 },
    });
    const { markdown } = renderReport(measured, "run");
    expect(markdown).toContain("|  | records / s | CPU µs / record |");
    expect(markdown).toContain(`| fraud-scorer serve | ${fmt(before.scorer.recordsPerSecond)} | 40.5 |`);
    expect(markdown).toContain("serve spent 40.5 µs of CPU per transaction, its Kafka client included");
    expect(markdown).toContain("spent 9.00 µs (serve ×4.50)");
    expect(summaryTable(measured)).toContain("; 40.5 vs 9.00 CPU µs/record (Kafka client included)");
  });

  it("sets serve's CPU over the drain's second half beside the whole drain's when measured, and not before", () => {
    const measured = withCeiling({
      scorer: { ...committedCeiling.scorer, cpuUsPerRecord: 30 },
      passthrough: { ...committedCeiling.passthrough, cpuUsPerRecord: 10 },
    });
    expect(renderReport(measured, "run").markdown).not.toContain("second half");
    const rounds = [
      { seconds: 10, recordsPerSecond: 30_000, cpuUsPerRecord: 32, secondHalfCpuUsPerRecord: 26 },
      { seconds: 10, recordsPerSecond: 30_000, cpuUsPerRecord: 28, secondHalfCpuUsPerRecord: 24 },
    ];
    const withHalf = withCeiling({
      scorer: { ...committedCeiling.scorer, cpuUsPerRecord: 30, secondHalfCpuUsPerRecord: 25, rounds },
      passthrough: { ...committedCeiling.passthrough, cpuUsPerRecord: 10 },
    });
    const { markdown } = renderReport(withHalf, "run");
    expect(markdown).toContain("| records / s | CPU µs / record | the drain's second half |");
    expect(markdown).toContain("| 30.0 (32.0 · 28.0) | 25.0 (26.0 · 24.0) |");
    // The passthrough measured no second half: a dash in its column.
    expect(markdown).toContain("| 10.0 | — |");
    expect(markdown).toContain("serve spent 25.0 µs per transaction, ×0.83 the whole drain's");
    expect(summaryTable(withHalf)).toContain("; serve over the drain's second half 25.0 µs/record");
    expect(summaryTable(measured)).not.toContain("second half");
  });

  /**
   * A ceiling whose drains were split by thread: serve 30 µs a record (main thread 22, other
   * threads 8) beside Redis's 6 and the broker's 4, the passthrough 10 (7 and 3) beside the
   * broker's 2; with the main threads' shares of the drain (on a core, waiting) when given.
   */
  const splitCeiling = (shares?: {
    readonly scorer: readonly [number, number];
    readonly passthrough: readonly [number, number];
  }) => {
    const sharesOf = (given: readonly [number, number] | undefined) =>
      given === undefined ? {} : { mainThreadOnCorePercent: given[0], mainThreadWaitingPercent: given[1] };
    return withCeiling({
      scorer: {
        ...committedCeiling.scorer,
        recordsPerSecond: 30_000,
        cpuUsPerRecord: 30,
        cpuSplit: {
          mainThreadUsPerRecord: 22,
          otherThreadsUsPerRecord: 8,
          redisUsPerRecord: 6,
          brokerUsPerRecord: 4,
          ...sharesOf(shares?.scorer),
        },
      },
      passthrough: {
        ...committedCeiling.passthrough,
        recordsPerSecond: 100_000,
        cpuUsPerRecord: 10,
        cpuSplit: {
          mainThreadUsPerRecord: 7,
          otherThreadsUsPerRecord: 3,
          brokerUsPerRecord: 2,
          ...sharesOf(shares?.passthrough),
        },
      },
    });
  };

  it("splits each drain's CPU by thread and sets what Redis and the broker spent beside it, when measured", () => {
    expect(renderReport(committed, "run").markdown).not.toContain("costs the machine");
    const { markdown } = renderReport(splitCeiling(), "run");
    expect(markdown).toContain(
      "serve's main thread 22.0 (JavaScript, and the collector's pauses) and its other threads 8.00",
    );
    expect(markdown).toContain("the passthrough's 7.00 and 3.00");
    // 30 + 6 + 4 = 40 µs a record: two cores drain at most 50,000 a second, half the passthrough's 100,000.
    expect(markdown).toContain("costs the machine 40.0 µs of CPU, one of the passthrough's 12.0.");
    expect(markdown).toContain(`at most ${fmt(50_000)} records/s through serve (it drained ${fmt(30_000)}`);
    expect(markdown).toContain("cannot keep more than 50.0 % of the passthrough's measured throughput");
    expect(markdown).not.toContain("runnable but waiting");
  });

  it("says what sets the drain's pace from its main thread's time on a core and waiting for one, when measured", () => {
    const withShares = (onCore: number, waiting: number, passthroughOnCore = 70) =>
      renderReport(splitCeiling({ scorer: [onCore, waiting], passthrough: [passthroughOnCore, 5] }), "run")
        .markdown;
    const bound = withShares(80, 15);
    expect(bound).toContain(
      "serve's main thread was on a core 80.0 % of it and runnable but waiting for one 15.0 %",
    );
    expect(bound).toContain("the passthrough's 70.0 % and 5.0 %.");
    expect(bound).toContain(
      `(it drained ${fmt(30_000)}: serve's main thread, not the two cores, sets the pace: it was on a core or waiting for one 95.0 % of the drain)`,
    );
    // The passthrough, 75 % busy, is not paced by its main thread: no ratio of main threads.
    expect(bound).not.toContain("Both drains are paced by their main threads");
    const both = withShares(80, 15, 88);
    // 7 µs of the passthrough's main thread per record against serve's 22: 31.8 %.
    expect(both).toContain(
      "Both drains are paced by their main threads (above), so this follows those threads' CPU per record: the passthrough's 7.00 µs is 31.8 % of serve's 22.0;",
    );
    const idle = withShares(60, 10);
    expect(idle).toContain(`(it drained ${fmt(30_000)}: the drain does not keep both cores busy)`);
    expect(idle).not.toContain("sets the pace");
  });

  it("gives each drain's rounds after their mean, and says how the rounds were ordered", () => {
    const before = committedCeiling;
    expect(renderReport(committed, "run").markdown).not.toContain("the order reversed every other round");
    const scorer = {
      ...before.scorer,
      recordsPerSecond: 20_500,
      cpuUsPerRecord: 40.5,
      rounds: [
        { seconds: 14.6, recordsPerSecond: 20_000, cpuUsPerRecord: 42 },
        { seconds: 14.0, recordsPerSecond: 21_000, cpuUsPerRecord: 39 },
      ],
    };
    const twoRounds = withCeiling({
      rounds: 2,
      scorer,
      passthrough: { ...before.passthrough, cpuUsPerRecord: 9 },
      scorerExactlyOnce: { ...scorer, stateWork: { deferred: 6_000, dropped: 0 } },
    });
    const { markdown } = renderReport(twoRounds, "run");
    expect(markdown).toContain(
      `| fraud-scorer serve | ${fmt(20_500)} (${fmt(20_000)} · ${fmt(21_000)}) | 40.5 (42.0 · 39.0) |`,
    );
    expect(markdown).toContain(
      "Each drain ran 2 times, once per round, the order reversed every other round",
    );
    expect(markdown).toContain("0 of 6000 deferred state updates dropped over its 2 drains");
  });

  it("sets another checkout's scorer beside this one's when the run compared them, and not otherwise", () => {
    const before = committedCeiling;
    expect(renderReport(committed, "run").markdown).not.toContain("--compare-with");
    const compared = withCeiling({
      rounds: 2,
      scorer: { ...before.scorer, recordsPerSecond: 30_000, cpuUsPerRecord: 30 },
      passthrough: { ...before.passthrough, cpuUsPerRecord: 9 },
      compared: {
        root: "/tmp/base",
        commit: "78e6c1c",
        scorer: {
          ...before.scorer,
          recordsPerSecond: 25_000,
          cpuUsPerRecord: 36,
          cpuSplit: { mainThreadUsPerRecord: 27, otherThreadsUsPerRecord: 9 },
        },
      },
    });
    const { markdown } = renderReport(compared, "run");
    expect(markdown).toContain(`| fraud-scorer serve of 78e6c1c (--compare-with) | ${fmt(25_000)} | 36.0 |`);
    expect(markdown).toContain(
      "Run with `--compare-with /tmp/base`: that checkout's scorer (78e6c1c, its own dist/ built for the run)",
    );
    expect(markdown).toContain(
      "at 36.0 µs of CPU per record (main thread 27.0, other threads 9.00), against this checkout's 30.0.",
    );
    // 30 ÷ 36 and 30,000 ÷ 25,000.
    expect(summaryTable(compared)).toContain("| ×0.83 the CPU, ×1.20 the records/s |");
  });
});

describe("a CPU profile's summary", () => {
  // (root) → processTicks → step → a native callback; and (idle).
  const frame = (functionName: string, url = "", lineNumber = 0) => ({ functionName, url, lineNumber });
  const profile = {
    nodes: [
      { id: 1, callFrame: frame("(root)"), children: [2, 5] },
      {
        id: 2,
        callFrame: frame("processTicksAndRejections", "node:internal/process/task_queues", 70),
        children: [3],
      },
      {
        id: 3,
        callFrame: frame("step", "file:///repo/src/model/onnxStepSession.ts", 114),
        hitCount: 1,
        children: [4],
      },
      { id: 4, callFrame: frame(""), hitCount: 3 },
      { id: 5, callFrame: frame("(idle)"), hitCount: 6 },
    ],
  };

  it("names a native function by its caller and charges it to the caller's owner", () => {
    const { topFrames, owners } = summariseProfile(profile, "/repo/");
    expect(topFrames[1]).toEqual({
      name: UNNAMED_NATIVE,
      where: "native, from step src/model/onnxStepSession.ts:115",
      selfPercent: 30,
    });
    expect(owners["src/model"]).toBe(40);
  });

  it("keeps the names of Node's own bindings, not a name the profiler borrowed for another native", () => {
    const borrowed = {
      nodes: [
        { id: 1, callFrame: frame("(root)"), children: [2, 4] },
        {
          id: 2,
          callFrame: frame("handleWriteReq", "node:internal/stream_base_commons", 44),
          children: [3],
        },
        { id: 3, callFrame: frame("writeBuffer"), hitCount: 2 },
        { id: 4, callFrame: frame("step", "file:///repo/src/model/onnxStepSession.ts", 114), children: [5] },
        { id: 5, callFrame: frame("crc32c"), hitCount: 3 },
      ],
    };
    const { topFrames } = summariseProfile(borrowed, "/repo/");
    expect(topFrames.map((f) => f.name)).toEqual([UNNAMED_NATIVE, "writeBuffer"]);
    expect(topFrames[1]!.where).toBe("native, from handleWriteReq node:internal/stream_base_commons:45");
  });

  it("counts shares of the busy samples when asked to leave idle out", () => {
    const all = summariseProfile(profile, "/repo/");
    const busy = summariseProfile(profile, "/repo/", { busyOnly: true });
    expect(all.busyPercent).toBe(40);
    expect(busy.busyPercent).toBe(40);
    expect(all.topFrames[0]).toMatchObject({ name: "(idle)", selfPercent: 60 });
    expect(busy.topFrames.map((f) => f.selfPercent)).toEqual([75, 25]);
    expect(busy.owners).toEqual({ "src/model": 100 });
  });
});
