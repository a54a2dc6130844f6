// Report chapter 6: how much of a bare passthrough on the same client, and of Kafka's own tools,
// the scorer keeps.
import type { CeilingResult, DrainRound, DrainThroughput } from "../../sections/ceiling.js";
import type { DrainCpuSplit } from "../../support/drainCpu.js";
import { barChart } from "../../../src/tools/svgCharts.js";
import { LANE_HIGH_WATER } from "../../../src/scoring/deferredStateLane.js";
import { fmt, pct, table, x } from "../reportFormat.js";
import type { SectionRenderer } from "../sectionRenderer.js";

const fmtOrDash = (n: number | undefined) => (n === undefined ? "—" : fmt(n));
/** Whether each drain ran more than once (results from before the rounds have none). */
const ranInRounds = (c: CeilingResult) => (c.rounds ?? 1) > 1;
type PerfToolResult = CeilingResult["kafkaConsumerPerf"] | CeilingResult["kafkaProducerPerf"];
const recordsPerSecond = (p: PerfToolResult) => ("recordsPerSecond" in p ? p.recordsPerSecond : undefined);
// Results from before the port name no client: their passthrough was kafkajs's.
const passthroughName = (c: CeilingResult) =>
  c.passthroughClient === undefined ? "kafkajs passthrough" : "passthrough (same client, the port)";

/**
 * The drain's CPU per record, every thread of each process, its Kafka client included: the whole
 * of what the scorer spends per transaction, where section 8's drain leaves the client out.
 */
function cpuLines(c: CeilingResult): string[] {
  const scorer = c.scorer.cpuUsPerRecord!;
  const passthrough = c.passthrough.cpuUsPerRecord;
  return [
    "CPU per record: each process's own (process.cpuUsage, every thread; serve's process_cpu_seconds_total), " +
      "from its group join (serve: from its readiness, which the join completes) to the last output record, ÷ records. " +
      `**Draining the backlog, serve spent ${fmt(scorer)} µs of CPU per transaction, its Kafka client included**` +
      (passthrough === undefined
        ? "."
        : `, where the passthrough, the same client consuming and producing the same records with nothing between, spent ` +
          `${fmt(passthrough)} µs (serve ${x(scorer / passthrough)}); section 8 measures what lies between, in process, without the client.`),
    "",
    ...secondHalfLines(c),
    ...splitLines(c),
  ];
}

/**
 * serve's CPU over the second half of its drain beside the whole drain's (results from before
 * 2026-12-07h have none): how much of a drain's cost per record is a fresh process's start.
 */
function secondHalfLines(c: CeilingResult): string[] {
  const whole = c.scorer.cpuUsPerRecord;
  const secondHalf = c.scorer.secondHalfCpuUsPerRecord;
  if (whole === undefined || secondHalf === undefined) return [];
  return [
    `Over the second half of its drain (from the poll that first found half the decisions out to the last), serve spent ` +
      `${fmt(secondHalf)} µs per transaction, ${x(secondHalf / whole)} the whole drain's: a process already warm, where V8 has ` +
      "compiled the hot code and the state cache holds the cards seen so far. The whole drain's figure also holds a fresh " +
      "process's first seconds, which a restart facing a backlog pays.",
    "",
  ];
}

/**
 * The drains' CPU by thread, and Redis's and the broker's beside them (results from before
 * 2026-12-05f have none): what a record costs the machine, which bounds a drain on two cores.
 */
function splitLines(c: CeilingResult): string[] {
  const s = c.scorer.cpuSplit;
  const p = c.passthrough.cpuSplit;
  if (s?.mainThreadUsPerRecord === undefined || p?.mainThreadUsPerRecord === undefined) return [];
  const lines = [
    `Of those, µs per record: serve's main thread ${fmt(s.mainThreadUsPerRecord)} (JavaScript, and the collector's pauses) and its other ` +
      `threads ${fmt(s.otherThreadsUsPerRecord!)} (V8's helpers: parallel scavenging, concurrent marking and sweeping, optimizing ` +
      `compilation); the passthrough's ${fmt(p.mainThreadUsPerRecord)} and ${fmt(p.otherThreadsUsPerRecord!)} (/proc/<pid>/task).` +
      mainThreadSentence(s, p),
  ];
  if (
    s.redisUsPerRecord !== undefined &&
    s.brokerUsPerRecord !== undefined &&
    p.brokerUsPerRecord !== undefined
  ) {
    const scorerMachine = c.scorer.cpuUsPerRecord! + s.redisUsPerRecord + s.brokerUsPerRecord;
    const passthroughMachine = c.passthrough.cpuUsPerRecord! + p.brokerUsPerRecord;
    // Two cores at full use, nothing else running: a bound on serve's drain that its measured
    // rate, and the passthrough's, cannot pass.
    const scorerBound = 2e6 / scorerMachine;
    lines.push(
      `Beside serve's drain, on the same two cores, Redis spent ${fmt(s.redisUsPerRecord)} µs of its own per transaction (/proc; INFO cpu for a Redis elsewhere) ` +
        `and the broker ${fmt(s.brokerUsPerRecord)} (the process on its port, /proc); beside the passthrough's, the broker ${fmt(p.brokerUsPerRecord)}. ` +
        `**A record of serve's drain costs the machine ${fmt(scorerMachine)} µs of CPU, one of the passthrough's ${fmt(passthroughMachine)}.** ` +
        `Two cores at full use would drain at most ${fmt(Math.round(scorerBound))} records/s through serve (it drained ${fmt(c.scorer.recordsPerSecond)}: ` +
        `${pacedBy(s)}) and ${fmt(Math.round(2e6 / passthroughMachine))} through the passthrough: at this CPU per record, ` +
        `the scorer cannot keep more than ${pct(scorerBound / c.passthrough.recordsPerSecond)} of the passthrough's measured throughput.`,
    );
  }
  return [...lines, ""];
}

/**
 * A main thread on a core or waiting for one at least this share of a drain (%) sets the drain's
 * pace: it has work whenever it is not running.
 */
const MAIN_THREAD_BOUND_PERCENT = 90;

const mainThreadBusy = (s: DrainCpuSplit) =>
  s.mainThreadOnCorePercent === undefined
    ? undefined
    : s.mainThreadOnCorePercent + s.mainThreadWaitingPercent!;

/** Whether the drain's main thread had work so much of the time that it set the pace. */
const pacedByMainThread = (s: DrainCpuSplit | undefined): s is DrainCpuSplit =>
  s !== undefined && (mainThreadBusy(s) ?? 0) >= MAIN_THREAD_BOUND_PERCENT;

/** The main threads' time on a core and waiting for one (results from before 2026-12-07 have none). */
function mainThreadSentence(s: DrainCpuSplit, p: DrainCpuSplit): string {
  if (s.mainThreadOnCorePercent === undefined || p.mainThreadOnCorePercent === undefined) return "";
  return (
    ` Over the drain's wall time, serve's main thread was on a core ${pct(s.mainThreadOnCorePercent / 100)} of it and runnable but ` +
    `waiting for one ${pct(s.mainThreadWaitingPercent! / 100)} (the kernel's schedstat: a core taken by Redis, the broker or ` +
    `another thread); the passthrough's ${pct(p.mainThreadOnCorePercent / 100)} and ${pct(p.mainThreadWaitingPercent! / 100)}.`
  );
}

/**
 * When both drains are paced by their main threads, what they keep of each other follows those
 * threads' CPU per record.
 */
function mainThreadRatioSentence(c: CeilingResult): string {
  const s = c.scorer.cpuSplit;
  const p = c.passthrough.cpuSplit;
  if (!pacedByMainThread(s) || !pacedByMainThread(p)) return "";
  return (
    ` Both drains are paced by their main threads (above), so this follows those threads' CPU per record: the passthrough's ` +
    `${fmt(p.mainThreadUsPerRecord!)} µs is ${pct(p.mainThreadUsPerRecord! / s.mainThreadUsPerRecord!)} of serve's ${fmt(s.mainThreadUsPerRecord!)}; ` +
    "serve would keep about half the passthrough's throughput with a main thread spending at most twice as much per record."
  );
}

/** Why a drain stays under the two cores' bound, where the main thread's time says. */
function pacedBy(s: DrainCpuSplit): string {
  if (!pacedByMainThread(s)) return "the drain does not keep both cores busy";
  return `serve's main thread, not the two cores, sets the pace: it was on a core or waiting for one ${pct(mainThreadBusy(s)! / 100)} of the drain`;
}

/** Results from before 83c502f did not count the state work the drain left undone. */
function stateWorkLines(c: CeilingResult): string[] {
  const runs = [
    ["serve", c.scorer.stateWork],
    ["serve --exactly-once", c.scorerExactlyOnce?.stateWork],
  ] as const;
  const known = runs.filter(([, w]) => w !== undefined);
  if (known.length === 0) return [];
  return [
    "The decisions do not wait for the card-state work of a backlog (it goes to the deferred lane), so the drain counts " +
      "what that lane had given up when the last decision was out: " +
      known
        .map(
          ([name, w]) =>
            `${name}: ${fmt(w!.dropped)} of ${fmt(w!.deferred)} deferred state updates dropped` +
            (ranInRounds(c) ? ` over its ${c.rounds} drains` : ""),
        )
        .join("; ") +
      `. The consumer takes no more while the lane has more than ${fmt(LANE_HIGH_WATER)} transactions waiting (LANE_HIGH_WATER, src/scoring/deferredStateLane.ts), so a ` +
      "drain is as fast as its state is kept.",
    "",
  ];
}

/**
 * A summary row of serve's drain against another scorer's drain of the same backlog: CPU per
 * record and records/s, and their ratios after `verdict`. None unless both measured their CPU.
 */
function scorerAgainstRow(
  c: CeilingResult,
  against: string,
  d: DrainThroughput,
  verdict: string,
): string[][] {
  if (d.cpuUsPerRecord === undefined || c.scorer.cpuUsPerRecord === undefined) return [];
  return [
    [
      `6. Ceiling: scorer vs ${against} (drain a backlog)`,
      `${fmt(c.scorer.cpuUsPerRecord)} vs ${fmt(d.cpuUsPerRecord)} CPU µs/record; ` +
        `${fmt(c.scorer.recordsPerSecond)} vs ${fmt(d.recordsPerSecond)} records/s`,
      `${verdict}${x(c.scorer.cpuUsPerRecord / d.cpuUsPerRecord)} the CPU, ` +
        `${x(c.scorer.recordsPerSecond / d.recordsPerSecond)} the records/s`,
    ],
  ];
}

/** serve as it runs (64 MB young-generation semi-spaces, bin/nodeFlags.js) vs with V8's 16. */
const youngGenerationRows = (c: CeilingResult): string[][] =>
  c.scorerDefaultYoungGeneration === undefined
    ? []
    : scorerAgainstRow(
        c,
        "the same with V8's default young generation",
        c.scorerDefaultYoungGeneration,
        "64 MB semi-spaces: ",
      );

/** serve against another checkout's serve, when the run was given --compare-with. */
const comparedRows = (c: CeilingResult): string[][] =>
  c.compared === undefined
    ? []
    : scorerAgainstRow(c, `the scorer of ${c.compared.commit} (--compare-with)`, c.compared.scorer, "");

function comparedLines(c: CeilingResult): string[] {
  const o = c.compared;
  if (o?.scorer.cpuUsPerRecord === undefined || c.scorer.cpuUsPerRecord === undefined) return [];
  const split = (d: DrainThroughput) =>
    d.cpuSplit?.mainThreadUsPerRecord === undefined
      ? ""
      : ` (main thread ${fmt(d.cpuSplit.mainThreadUsPerRecord)}, other threads ${fmt(d.cpuSplit.otherThreadsUsPerRecord!)})`;
  return [
    `Run with \`--compare-with ${o.root}\`: that checkout's scorer (${o.commit}, its own dist/ built for the run) drained the ` +
      `same backlog${ranInRounds(c) ? " in the same rounds" : ""}, ${fmt(o.scorer.recordsPerSecond)} records/s at ` +
      `${fmt(o.scorer.cpuUsPerRecord)} µs of CPU per record${split(o.scorer)}, against this checkout's ` +
      `${fmt(c.scorer.cpuUsPerRecord)}${split(c.scorer)}.`,
    "",
  ];
}

function youngGenerationLines(c: CeilingResult): string[] {
  const d = c.scorerDefaultYoungGeneration;
  if (d === undefined) return [];
  return [
    "serve runs with young-generation semi-spaces of up to 64 MB (bin/nodeFlags.js); a second scorer drained the " +
      "same backlog started with V8's default, 16 MB (`NODE_OPTIONS=--max-semi-space-size=16`)" +
      (ranInRounds(c) ? ", in the same rounds: " : ", right after the first: ") +
      `${fmt(d.recordsPerSecond)} records/s` +
      (d.cpuUsPerRecord === undefined ? "." : ` at ${fmt(d.cpuUsPerRecord)} µs of CPU per record.`),
    "",
  ];
}

export const ceilingReport: SectionRenderer<CeilingResult> = {
  heading: "6. Ceiling",

  summaryRows(c) {
    const consumer = recordsPerSecond(c.kafkaConsumerPerf);
    const producer = recordsPerSecond(c.kafkaProducerPerf);
    return [
      [
        `6. Ceiling: scorer vs ${passthroughName(c)} (drain a backlog)`,
        `${fmt(c.scorer.recordsPerSecond)} vs ${fmt(c.passthrough.recordsPerSecond)} records/s` +
          (c.scorer.cpuUsPerRecord !== undefined && c.passthrough.cpuUsPerRecord !== undefined
            ? `; ${fmt(c.scorer.cpuUsPerRecord)} vs ${fmt(c.passthrough.cpuUsPerRecord)} CPU µs/record (Kafka client included)`
            : "") +
          (c.scorer.secondHalfCpuUsPerRecord !== undefined
            ? `; serve over the drain's second half ${fmt(c.scorer.secondHalfCpuUsPerRecord)} µs/record`
            : ""),
        `scorer keeps ${pct(c.scorerOverPassthrough)} of the passthrough` +
          (c.scorer.stateWork ? `; ${fmt(c.scorer.stateWork.dropped)} state updates dropped` : ""),
      ],
      ...(c.scorerExactlyOnce
        ? [
            [
              "6. Ceiling: scorer --exactly-once vs at-least-once (drain a backlog)",
              `${fmt(c.scorerExactlyOnce.recordsPerSecond)} vs ${fmt(c.scorer.recordsPerSecond)} records/s`,
              `exactly-once keeps ${pct(c.exactlyOnceOverScorer!)} of the at-least-once throughput`,
            ],
          ]
        : []),
      ...youngGenerationRows(c),
      ...comparedRows(c),
      [
        "6. Ceiling: Kafka's own perf tools (broker limit here)",
        `consume ${consumer === undefined ? "n/a" : fmt(consumer)}, produce ${producer === undefined ? "n/a" : fmt(producer)} records/s`,
        c.scorerOverKafkaConsumer === undefined
          ? "—"
          : `scorer ${pct(c.scorerOverKafkaConsumer)}, passthrough ${pct(c.passthroughOverKafkaConsumer!)} of ConsumerPerformance`,
      ],
    ];
  },

  chapter(c, chart) {
    const perf = (p: PerfToolResult) =>
      "recordsPerSecond" in p ? fmt(p.recordsPerSecond) : `n/a (${p.unavailable})`;
    const measuredCpu = c.scorer.cpuUsPerRecord !== undefined;
    // The CPU columns the scorer's drain measured (results from before each have none of it).
    const cpuColumns = (
      [
        ["CPU µs / record", (d) => d.cpuUsPerRecord],
        ["the drain's second half", (d) => d.secondHalfCpuUsPerRecord],
      ] as const satisfies readonly (readonly [string, (d: DrainRound) => number | undefined])[]
    ).filter(([, figure]) => figure(c.scorer) !== undefined);
    // A mean of several rounds shows them after it, in round order.
    const withRounds = (d: DrainThroughput, figure: (r: DrainRound) => number | undefined) => {
      const mean = figure(d);
      if (mean === undefined) return "—";
      return d.rounds === undefined
        ? fmt(mean)
        : `${fmt(mean)} (${d.rounds.map((r) => fmtOrDash(figure(r))).join(" · ")})`;
    };
    const drainRow = (name: string, d: DrainThroughput) => [
      name,
      withRounds(d, (r) => r.recordsPerSecond),
      ...cpuColumns.map(([, figure]) => withRounds(d, figure)),
    ];
    const noCpu = cpuColumns.map(() => "—");
    return [
      `A backlog of ${c.records} transactions (${c.recordBytes} bytes each, ${c.partitions} partitions) drained by the scorer ` +
        (c.passthroughClient === undefined
          ? "and by a passthrough with the same kafkajs consumer and idempotent producer settings but no decoding or scoring "
          : `and by a passthrough on the scorer's own client (${c.passthroughClient}) with serve's settings — classic group, ` +
            "idempotent acks=all sink, offsets committed after the acknowledgements, together at most every 100 ms as serve commits them — but no decoding or scoring, and by the " +
            "same passthrough on kafkajs 2.2.4 (the client before the port) as a second reference ") +
        "(bench/sections/ceilingPassthrough.ts), each in its own process; throughput from the output topic's offsets, from the " +
        "group's join to the last output record. The backlog's records are old, so the scorer decides them by the rules after " +
        "still reading state, stepping the model and writing state (the full work). Kafka's ProducerPerformance and " +
        `ConsumerPerformance (Kafka ${c.kafkaToolsVersion ?? "?"}, records of the same size, acks=all) give the broker's limit.` +
        (ranInRounds(c)
          ? ` Each drain ran ${c.rounds} times, once per round, the order reversed every other round (passthroughs first, ` +
            "then the scorers; then the other way round), so drift over the section hits every drain alike: each figure is " +
            "the mean of its rounds, which follow it in brackets, and the ratios are of the means."
          : ""),
      "",
      table(
        ["", "records / s", ...cpuColumns.map(([header]) => header)],
        [
          drainRow("fraud-scorer serve", c.scorer),
          ...(c.scorerDefaultYoungGeneration
            ? [drainRow("fraud-scorer serve, V8's default young generation", c.scorerDefaultYoungGeneration)]
            : []),
          ...(c.scorerExactlyOnce
            ? [drainRow("fraud-scorer serve --exactly-once", c.scorerExactlyOnce)]
            : []),
          ...(c.compared
            ? [drainRow(`fraud-scorer serve of ${c.compared.commit} (--compare-with)`, c.compared.scorer)]
            : []),
          drainRow(passthroughName(c), c.passthrough),
          ...(c.kafkajsPassthrough ? [drainRow("kafkajs passthrough", c.kafkajsPassthrough)] : []),
          ["Kafka ConsumerPerformance", perf(c.kafkaConsumerPerf), ...noCpu],
          ["Kafka ProducerPerformance", perf(c.kafkaProducerPerf), ...noCpu],
        ],
      ),
      "",
      ...(measuredCpu ? cpuLines(c) : []),
      ...youngGenerationLines(c),
      ...comparedLines(c),
      ...stateWorkLines(c),
      `**The scorer keeps ${pct(c.scorerOverPassthrough)} of the passthrough's throughput**` +
        (c.passthroughOverKafkaConsumer === undefined
          ? "."
          : `; the passthrough itself reaches ${pct(c.passthroughOverKafkaConsumer)} of Kafka's own consumer.`) +
        mainThreadRatioSentence(c) +
        (c.scorerExactlyOnce
          ? ` With \`--exactly-once\` (consume → score → produce in Kafka transactions, input offsets committed inside ` +
            `them; timed by the group's committed offsets, since transaction markers take offsets on the output) the scorer ` +
            `keeps ${pct(c.exactlyOnceOverScorer!)} of its at-least-once throughput.`
          : ""),
      "",
      chart(
        "ceiling",
        barChart(
          [
            {
              label: "records per second",
              bars: [
                { name: "scorer", value: c.scorer.recordsPerSecond },
                { name: passthroughName(c), value: c.passthrough.recordsPerSecond },
                ...(c.kafkajsPassthrough
                  ? [{ name: "kafkajs passthrough", value: c.kafkajsPassthrough.recordsPerSecond }]
                  : []),
                ...("recordsPerSecond" in c.kafkaConsumerPerf
                  ? [{ name: "Kafka consumer perf", value: c.kafkaConsumerPerf.recordsPerSecond }]
                  : []),
                ...("recordsPerSecond" in c.kafkaProducerPerf
                  ? [{ name: "Kafka producer perf", value: c.kafkaProducerPerf.recordsPerSecond }]
                  : []),
              ],
            },
          ],
          { title: "Throughput ceiling", yLabel: "records/s (log scale)", logY: true },
        ),
      ),
      "",
    ];
  },
};
