// Section 8 of the report: the hot path's CPU by stage, its profile, and the steady runs.
import type {
  HotPathAllocation,
  CardReads,
  HotPathDrain,
  HotPathResult,
  HotPathSteadyProfile,
  ProfileFrame,
} from "../../sections/hotPath.js";
import type { NoisyNeighbourResult } from "../../sections/noisyNeighbour.js";
import type { SectionRenderer } from "../sectionRenderer.js";
import { x } from "../reportFormat.js";

const row = (cells: ReadonlyArray<string | number>) => `| ${cells.join(" | ")} |`;
const head = (cells: readonly string[]) =>
  [row(cells), `|${cells.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`].join("\n");
const us = (v: number | null) => (v === null ? "(Kafka port)" : v.toFixed(2));
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const pct = (share: number) => `${(share * 100).toFixed(share > 0.99 && share < 1 ? 2 : 1)} %`;

/** A profile's shares by owner, then by frame, as two tables; `unit` names the share column. */
const ownerAndFrameTables = (
  owners: Readonly<Record<string, number>>,
  frames: readonly ProfileFrame[],
  unit: string,
): string[] => [
  head(["Owner", unit]),
  ...Object.entries(owners).map(([owner, share]) => row([owner, share])),
  "",
  head(["Frame", "where", unit]),
  ...frames.map((f) => row([`\`${f.name}\``, f.where, f.selfPercent])),
];

const STAGE_ROWS = [
  ["consume", "consume"],
  ["decodeAndHashes", "decode + hashes"],
  ["stateRead", "state read (+ rebuild)"],
  ["features", "features"],
  ["model", "model"],
  ["policy", "policy / rules / state advance"],
  // Write-behind: the batch only builds and sends its write; the reply is read while the next
  // batch waits for its own read, so its CPU shows up in that row.
  ["stateWrite", "state write (sent; its reply is read in the next batch's state read)"],
  ["scoringOther", "scoreBatch, untimed"],
  ["encode", "encode decision"],
  ["metrics", "metrics"],
  ["produce", "produce"],
  ["commit", "commit"],
] as const;

/** Bytes per transaction and where (absent in results from before the allocation pass). */
function allocationChapter(a: HotPathAllocation | undefined): string[] {
  if (a === undefined) return [];
  return [
    `What the drain allocates: a third pass over ${a.transactions} further transactions, plain, under V8's ` +
      `sampling heap profiler (one sample per ${a.samplingIntervalBytes / 1024} KiB, objects already collected ` +
      `included): **${kib(a.bytesPerTransaction)} allocated per transaction**, which is what ` +
      "the garbage collector's share above is made of. By owner and by allocating frame, % of the bytes:",
    "",
    ...ownerAndFrameTables(a.owners, a.topSites, "bytes %"),
    "",
  ];
}

/** The steady run's profile (absent in results from before it was measured). */
function steadyProfileChapter(p: HotPathSteadyProfile | undefined): string[] {
  if (p === undefined) return [];
  return [
    `Where a steady rate's CPU goes: a third run at ${p.rate} tx/s (same warm-up), profiled over its ` +
      `${p.seconds} s window only (one sample per ${p.samplingIntervalUs} µs; the rows above ran without the ` +
      `profiler). The main thread was busy in ${p.busyPercent} % of the samples; shares below are of those ` +
      "busy samples, by owner and by frame. At this rate a batch is a handful of transactions every few " +
      "milliseconds, so what each batch pays once (a model run, a socket write to Redis for the read and one " +
      "for the write, timers) on caches that other processes have had for milliseconds outweighs what each " +
      "transaction pays:",
    "",
    ...ownerAndFrameTables(p.owners, p.topFrames, "busy %"),
    "",
  ];
}

/** The drain at an issuer's scale, beside the headline drain's figures. */
function issuerScaleParagraph(d: HotPathDrain): string[] {
  const u = d.issuerScale;
  if (u === undefined) return [];
  return [
    `At an issuer's scale: the same drain over ${u.cards} cards, more than serve keeps in memory ` +
      `(${u.cachedCards} cards; a full run's is \`redis.stateCacheCards\`'s default): each simulated card's transactions are paid in turn by ` +
      `${u.cardVariants} cards (its id suffixed), so each card pays ${u.cardVariants} times less often; after a warm-up of one ` +
      `transaction on each card, ${u.transactions} fresh ones. Of the cards they looked up, ` +
      readsText(u.reads, "fetched from Redis, the MAC verified and the bytes decoded,") +
      (d.reads === undefined ? "" : ` (in the drain above: ${readsText(d.reads)})`) +
      `. **${u.cpuUsPerTransaction} µs ` +
      `of CPU per transaction** (${x(u.cpuUsPerTransaction / d.cpuUsPerTransaction)} the drain above), ` +
      `${u.transactionsPerSecond} tx/s, the model deciding ${pct(u.modelShare)}; Redis ${u.redisCpuUsPerTransaction} ` +
      `µs of its own per transaction` +
      (d.redisCpuUsPerTransaction === undefined
        ? "."
        : ` (${x(u.redisCpuUsPerTransaction / d.redisCpuUsPerTransaction)}).`),
    "",
  ];
}

function readsText({ fromMemory, found, absent }: CardReads, fetched = "fetched from Redis"): string {
  const share = (k: number) => pct(k / Math.max(1, fromMemory + found + absent));
  return `${share(fromMemory)} were served from memory, ${share(found)} ${fetched} and ${share(absent)} had no state yet`;
}

function hotPathChapter(h: HotPathResult): string[] {
  const out: string[] = [];
  const d = h.drain;
  out.push(
    `A drain of ${d.transactions} transactions in batches of ${d.maxBatch}, scored as fast as the loop goes: ` +
      `**${d.cpuUsPerTransaction} µs of CPU per transaction** (process.cpuUsage, every thread), ` +
      `${d.transactionsPerSecond} tx/s, the model deciding ${pct(d.modelShare)}` +
      (d.redisCpuUsPerTransaction === undefined
        ? ""
        : `. Redis, on the same two cores, spent **${d.redisCpuUsPerTransaction} µs of its own CPU per transaction** ` +
          "over the same drain (/proc; INFO cpu for a Redis elsewhere; the read and write scripts of each batch, one card's commands after another)") +
      (d.gc === undefined
        ? ""
        : `. V8 collected the young generation ${d.gc.minor} times and the whole heap ${d.gc.major} times, ` +
          `pausing the main thread for ${d.gc.pauseMs} ms in all: **${pct(d.gc.pauseShareOfWall)} of the drain's wall time** ` +
          `(${d.gc.other} incremental steps besides; the helper threads' parallel and concurrent work is in the CPU figure, not in the pauses)`) +
      (d.split === undefined
        ? ". By stage, µs of CPU per transaction:"
        : `; no profiler ran and no stage read the CPU clock in it. The split below comes from a second, ` +
          `instrumented pass over ${d.split.transactions} further transactions (process CPU read around every stage, ` +
          `the sampling profiler on), which cost ${d.split.cpuUsPerTransaction} µs per transaction in all; ` +
          `by stage, µs of CPU per transaction:`),
    "",
    head(["Stage", "µs / tx"]),
    ...STAGE_ROWS.map(([key, label]) => row([label, us(d.stages[key])])),
    "",
    "The model row is more than the model: it holds the breaker and the tensors around each step, and the " +
      "explaining step of flagged transactions (one more run, their features occluded one by one). A step " +
      "alone costs about 20 µs plus well under 1 µs per row when it runs back to back (section 5); after a " +
      "few milliseconds idle, as between the batches of a steady rate, the same step costs several times " +
      "that (ONNX Runtime's code and data are no longer in the caches; see the steady profile below).",
    "",
    ...issuerScaleParagraph(d),
    "Self time of the drain's CPU profile, by owner, then the top frames (a native function is placed by " +
      "its caller; one called from outside Node's own code, onnxruntime-node's run among them, shows as `(native)`: " +
      "the profiler gives it a borrowed name, such as `crc32c`, which every N-API callback shares):",
    "",
    ...ownerAndFrameTables(d.owners, d.topFrames, "self %"),
    "",
    ...allocationChapter(d.allocation),
    `Steady arrivals (1 ms timer), scored through the scoring queue with the product's batch linger, measured after ${h.steady[0]?.warmupS ?? 3} s at the same rate (V8 optimizes per-batch code for the first ~15 s, and again after some 20,000 transactions, when it throws away the state path's optimized code at once: bench/benchPlan.ts); latency from arrival to decision. ` +
      "The process's share of a core includes the bench's own 1 ms arrival timer, a thousand wake-ups a second; " +
      "the same timer loop run alone just before each run (no ingest, no scoring) gives its cost, and the scorer's share is the difference. " +
      "Redis's own CPU over the same window is beside it:",
    "",
    head([
      "Run",
      "% of a core",
      "arrival timer alone %",
      "scorer % (less the timer)",
      "µs CPU / tx",
      "Redis % of a core (µs / tx)",
      "mean batch (linger ms)",
      "p50 ms",
      "p99 ms",
      "max ms",
      "model decided",
      "loop delay p99 / max ms",
      "fallback causes",
    ]),
    ...h.steady.map((s) =>
      row([
        s.label,
        s.corePercent,
        s.arrivalTimerCorePercent ?? "—",
        s.scorerCorePercent ?? "—",
        s.cpuUsPerTransaction,
        s.redisCorePercent === undefined ? "—" : `${s.redisCorePercent} (${s.redisCpuUsPerTransaction})`,
        s.meanBatch === undefined ? "—" : `${s.meanBatch} (${s.lingerMs})`,
        s.p50Ms,
        s.p99Ms,
        s.maxMs,
        pct(s.modelShare),
        `${s.eventLoopDelayMs.p99} / ${s.eventLoopDelayMs.max}`,
        Object.entries(s.fallbackCauses)
          .map(([cause, n]) => `${cause} ${n}`)
          .join(", ") || "none",
      ]),
    ),
    "",
    ...steadyProfileChapter(h.steadyProfile),
  );
  return out;
}

/** The section's runs, labelled; a report from before 2026-12-05 has no exactly-once run. */
function runsOf(n: NoisyNeighbourResult): [string, NoisyNeighbourResult["alone"]][] {
  return [
    ["alone", n.alone],
    ["beside a CPU hog", n.besideHog],
    ...(n.exactlyOnce === undefined
      ? []
      : [["with --exactly-once, alone", n.exactlyOnce] as [string, NoisyNeighbourResult["alone"]]]),
  ];
}

function noisyNeighbourChapter(n: NoisyNeighbourResult): string[] {
  const out: string[] = [];
  out.push(
    `${n.rate} tx/s through \`serve\` on fresh scorers, alone and beside a process spinning on one core at ` +
      "normal priority, then alone with `--exactly-once` (each delivery's decisions and offsets in one Kafka " +
      "transaction, committed before the next delivery is taken). Latency from scheduled send to the decision's " +
      "broker append; with `--exactly-once`, a read_committed reader sees it once its transaction commits.",
    "",
    head(["Run", "p50 ms", "p99 ms", "max ms", "model decided", "undecided", "fallback causes"]),
    ...runsOf(n).map(([label, step]) =>
      row([
        label,
        step.endToEnd.p50Ms,
        step.endToEnd.p99Ms,
        step.endToEnd.maxMs,
        pct(1 - step.fallbackShare),
        step.undecided,
        Object.entries(step.fallbackCauses)
          .map(([cause, k]) => `${cause} ${k}`)
          .join(", ") || "none",
      ]),
    ),
    "",
  );
  return out;
}

export const hotPathReport: SectionRenderer<HotPathResult> = {
  heading: "8. Hot path (in process, real Redis)",
  summaryRows: (h) => [
    [
      `8. Hot path: drain of ${h.drain.transactions} transactions, in process, real Redis`,
      `${h.drain.cpuUsPerTransaction} µs of CPU per transaction, ${h.drain.transactionsPerSecond} tx/s` +
        (h.drain.redisCpuUsPerTransaction === undefined
          ? ""
          : ` (Redis: ${h.drain.redisCpuUsPerTransaction} µs of its own)`) +
        (h.drain.allocation === undefined
          ? ""
          : `; ${kib(h.drain.allocation.bytesPerTransaction)} allocated per transaction`),
      `model decided ${pct(h.drain.modelShare)}`,
    ],
    ...(h.drain.issuerScale === undefined
      ? []
      : [
          [
            `8. Hot path: the same drain over ${h.drain.issuerScale.cards} cards (serve keeps ${h.drain.issuerScale.cachedCards} in memory)`,
            `${h.drain.issuerScale.cpuUsPerTransaction} µs of CPU per transaction, ${h.drain.issuerScale.transactionsPerSecond} tx/s ` +
              `(Redis: ${h.drain.issuerScale.redisCpuUsPerTransaction} µs of its own)`,
            `model decided ${pct(h.drain.issuerScale.modelShare)}`,
          ],
        ]),
    ...h.steady.map((s) => [
      `8. Hot path: steady arrivals, ${s.label}`,
      `${s.corePercent} % of a core${s.scorerCorePercent === undefined ? "" : ` (${s.scorerCorePercent} % less the bench's arrival timer)`}, ${s.cpuUsPerTransaction} µs CPU/tx, p99 ${s.p99Ms} ms`,
      `model decided ${pct(s.modelShare)}, loop delay p99 ${s.eventLoopDelayMs.p99} ms`,
    ]),
    ...(h.steadyProfile === undefined
      ? []
      : [
          [
            `8. Hot path: where the main thread's time goes at ${h.steadyProfile.rate} tx/s (a profiled run)`,
            `busy ${h.steadyProfile.busyPercent} % of the samples; of that, ` +
              h.steadyProfile.topFrames
                .slice(0, 3)
                .map((f) => `${f.selfPercent} % \`${f.name}\`${f.where === "" ? "" : ` (${f.where})`}`)
                .join(", "),
            "per-batch costs on cold caches (section 8)",
          ],
        ]),
  ],
  chapter: (h) => hotPathChapter(h),
};

export const noisyNeighbourReport: SectionRenderer<NoisyNeighbourResult> = {
  heading: "9. Noisy neighbour and exactly-once (end to end)",
  summaryRows: (n) =>
    runsOf(n).map(([label, step]) => [
      `9. ${n.rate} tx/s end to end, ${label}`,
      `p50 ${step.endToEnd.p50Ms} / p99 ${step.endToEnd.p99Ms} / max ${step.endToEnd.maxMs} ms`,
      `model decided ${pct(1 - step.fallbackShare)}${step.undecided > 0 ? `, ${step.undecided} undecided` : ""}`,
    ]),
  chapter: (n) => noisyNeighbourChapter(n),
};
