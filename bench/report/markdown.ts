// bench/results/<date>.md and its SVG charts, from the results JSON. The summary table at the
// top is the one the README's Performance section carries.
import { STAGES } from "../support/decisionLatencies.js";
import type { ColdStartResult } from "../sections/coldStart.js";
import type { RateStep } from "../sections/endToEnd.js";
import { barChart, formatNumber as fmt, lineChart } from "./svgCharts.js";
import { isError, type BenchResults, type SectionError } from "./benchResults.js";
import { loadGeneratorSection, loadGeneratorSummaryRows } from "./loadGeneratorMarkdown.js";

export interface RenderedReport {
  readonly markdown: string;
  /** File name (relative to the markdown) → SVG. */
  readonly charts: ReadonlyMap<string, string>;
}

const STAGE_LABELS: Record<(typeof STAGES)[number], string> = {
  queue: "queue",
  decode: "decode",
  stateRead: "state read",
  features: "features",
  model: "model",
  policy: "policy",
  stateWrite: "state write",
  publish: "publish + ack",
};

const x = (ratio: number) => `×${ratio >= 10 ? ratio.toFixed(0) : ratio.toFixed(2)}`;
const pct = (share: number) => `${(share * 100).toFixed(share > 0 && share < 0.01 ? 2 : 1)} %`;
const ms = (v: number) => fmt(v);
/** A Markdown table; numeric columns (all but the first, unless told) are right-aligned. */
const table = (
  head: readonly string[],
  rows: ReadonlyArray<readonly (string | number)[]>,
  { leftColumns = 1 }: { leftColumns?: number } = {},
) =>
  [
    `| ${head.join(" | ")} |`,
    `|${head.map((_, i) => (i < leftColumns ? "---" : "---:")).join("|")}|`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");
const failed = (e: SectionError) => `_Did not complete: ${e.error}_`;

/** Median time between "model verified" and "model warm" over the runs with warm-up. */
function warmUpMs(k: ColdStartResult): number {
  const spans = k.runs
    .filter((run) => run.warmUp)
    .map(
      (run) =>
        (run.timeline.conditionsMetMs.modelWarm ?? NaN) - (run.timeline.conditionsMetMs.modelVerified ?? NaN),
    )
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  return spans.length === 0 ? NaN : spans[spans.length >> 1]!;
}

/** One row per comparison: what was compared, on what terms, and the ratio. */
export function summaryTable(r: BenchResults): string {
  const rows: string[][] = [];
  const e = r.endToEnd;
  if (!isError(e)) {
    for (const s of e.fixedRates)
      rows.push([
        `1. End to end, ${fmt(s.targetRate)} tx/s`,
        `p50 ${ms(s.endToEnd.p50Ms)} / p99 ${ms(s.endToEnd.p99Ms)} / p99.9 ${ms(s.endToEnd.p999Ms)} / max ${ms(s.endToEnd.maxMs)} ms`,
        `${pct(s.withinBudgetShare)} within ${e.budgetMs} ms, ${pct(1 - s.fallbackShare)} by the model` +
          (s.undecided > 0 ? `, ${s.undecided} undecided` : ""),
      ]);
    rows.push([
      `1. Highest rate with p99 ≤ ${e.budgetMs} ms, model deciding ≥ ${pct(1 - e.search.maxFallbackShare)}`,
      `${fmt(e.search.highestRateUnderBudget)} tx/s`,
      e.search.probes
        .map((p) => `${fmt(p.targetRate)}: p99 ${ms(p.endToEnd.p99Ms)} ms, ${pct(1 - p.fallbackShare)} model`)
        .join("; ") || "—",
    ]);
  }
  const d = r.decode;
  if (!isError(d))
    rows.push([
      "2. Decode: JSON + ajv vs Protobuf (real ingest path)",
      `${fmt(d.json.nsPerMessage)} vs ${fmt(d.protobuf.nsPerMessage)} ns/message`,
      `JSON ${x(d.jsonOverProtobufCost)} the real path (${x(d.jsonOverProtobufBufferReaderCost)} protobufjs's BufferReader); at 50k/s ${fmt(d.json.cpuMsPerSecondAt50k)} vs ${fmt(d.protobuf.cpuMsPerSecondAt50k)} ms of CPU per second`,
    ]);
  const b = r.batching;
  if (!isError(b))
    for (const load of b.loads)
      rows.push([
        `3. Batching at ${load.name} load (${fmt(load.ratePerSecond)} tx/s): wait-for-${b.maxBatch}-or-${b.dynamicMaxWaitMs} ms vs continuous`,
        `p50 ${ms(load.dynamic.timeToDecision.p50Ms)} vs ${ms(load.continuous.timeToDecision.p50Ms)} ms, p99 ${ms(load.dynamic.timeToDecision.p99Ms)} vs ${ms(load.continuous.timeToDecision.p99Ms)} ms`,
        `dynamic p50 ${x(load.p50Ratio)}, p99 ${x(load.p99Ratio)}`,
      ]);
  const s = r.state;
  if (!isError(s)) {
    const one = s.batchSizes.find((row) => row.batchSize === 1);
    const big = s.batchSizes.at(-1)!;
    if (one && big !== one)
      rows.push([
        `4. State: RedisCardStateStore per transaction vs per batch of ${big.batchSize} (same work)`,
        `${fmt(one.pipelined.usPerTransaction)} vs ${fmt(big.pipelined.usPerTransaction)} µs/transaction`,
        `per transaction ${x(s.storeBatch1OverLargestBatch)}`,
      ]);
    for (const row of s.batchSizes)
      rows.push([
        `4. State, batch of ${row.batchSize}: GET+SET per transaction vs one pipelined round trip`,
        `${fmt(row.perTransaction.usPerTransaction)} vs ${fmt(row.pipelined.usPerTransaction)} µs/transaction`,
        `per-transaction ${x(row.perTransactionOverPipelined)} (concurrent GET+SET ${x(row.concurrentOverPipelined)})`,
      ]);
  }
  const m = r.model;
  if (!isError(m)) {
    const v = (p: string, batch: number) =>
      m.variants.find((a) => a.precision === p && a.batchSize === batch);
    const sizes = [...new Set(m.variants.map((a) => a.batchSize))].sort((a, b) => a - b);
    const [small, large] = [sizes[0]!, sizes.at(-1)!];
    rows.push([
      "5. Model: fp32 vs int8 (µs per transaction)",
      `batch ${small}: ${fmt(v("fp32", small)!.usPerTransaction)} vs ${fmt(v("int8", small)!.usPerTransaction)}; batch ${large}: ${fmt(v("fp32", large)!.usPerTransaction)} vs ${fmt(v("int8", large)!.usPerTransaction)}`,
      `fp32 ${x(m.fp32OverInt8AtBatch1)} at batch ${small}, ${x(m.fp32OverInt8AtLargestBatch)} at ${large}`,
    ]);
    rows.push([
      `5. Model: batch ${small} vs ${large} (µs per transaction)`,
      `int8 ${fmt(v("int8", small)!.usPerTransaction)} vs ${fmt(v("int8", large)!.usPerTransaction)}`,
      `batch ${small} costs ${x(m.batch1OverLargestInt8)} per transaction (fp32 ${x(m.batch1OverLargestFp32)})`,
    ]);
  }
  const c = r.ceiling;
  if (!isError(c)) {
    const consumer =
      "recordsPerSecond" in c.kafkaConsumerPerf ? c.kafkaConsumerPerf.recordsPerSecond : undefined;
    const producer =
      "recordsPerSecond" in c.kafkaProducerPerf ? c.kafkaProducerPerf.recordsPerSecond : undefined;
    rows.push([
      "6. Ceiling: scorer vs kafkajs passthrough (drain a backlog)",
      `${fmt(c.scorer.recordsPerSecond)} vs ${fmt(c.passthrough.recordsPerSecond)} records/s`,
      `scorer keeps ${pct(c.scorerOverPassthrough)} of the passthrough`,
    ]);
    rows.push([
      "6. Ceiling: Kafka's own perf tools (broker limit here)",
      `consume ${consumer === undefined ? "n/a" : fmt(consumer)}, produce ${producer === undefined ? "n/a" : fmt(producer)} records/s`,
      c.scorerOverKafkaConsumer === undefined
        ? "—"
        : `scorer ${pct(c.scorerOverKafkaConsumer)}, passthrough ${pct(c.passthroughOverKafkaConsumer!)} of ConsumerPerformance`,
    ]);
  }
  const k = r.coldStart;
  if (!isError(k))
    rows.push([
      "7. Cold start: first decision without vs with model warm-up",
      `${ms(k.withoutWarmUp.firstDecisionMs)} vs ${ms(k.withWarmUp.firstDecisionMs)} ms (model stage ${fmt(k.withoutWarmUp.firstDecisionModelUs / 1000)} vs ${fmt(k.withWarmUp.firstDecisionModelUs / 1000)} ms); start → ready ${fmt(k.withWarmUp.startToReadyMs)} ms, of which warm-up ${fmt(warmUpMs(k))} ms`,
      `no warm-up ${x(k.firstDecisionWithoutOverWith)} first decision, ${x(k.firstModelStageWithoutOverWith)} model stage`,
    ]);
  rows.push(...loadGeneratorSummaryRows(r));
  return table(["Comparison", "Measured", "Ratio / verdict"], rows, { leftColumns: 3 });
}

export function renderReport(r: BenchResults, chartPrefix: string): RenderedReport {
  const charts = new Map<string, string>();
  const chart = (name: string, svg: string) => {
    const file = `${chartPrefix}-${name}.svg`;
    charts.set(file, svg);
    return `![${name}](${file})`;
  };
  const { meta } = r;
  const out: string[] = [
    `# fraud-scorer benchmarks, ${meta.date}${meta.smoke ? " (smoke run: numbers not meaningful)" : ""}`,
    "",
    `\`${meta.command}\` · ${meta.durationS.toFixed(0)} s · commit ${meta.commit} · ${meta.machine.cpus} × ${meta.machine.cpuModel}, ` +
      `${meta.machine.memoryGiB} GiB · Node ${meta.machine.node} · Kafka ${meta.stack.kafkaVersion ?? "?"} · load average ` +
      `${meta.machine.loadAverageAtStart.toFixed(1)} at start, ${meta.machine.loadAverageAtEnd.toFixed(1)} at end`,
    "",
    "Every comparison runs both sides in the same run, on the same machine, interleaved where it can be; " +
      "read the ratios, not the absolute times, which drift with whatever else the machine is doing.",
    "",
    "## Summary",
    "",
    summaryTable(r),
    "",
  ];

  out.push("## 1. End to end", "");
  if (isError(r.endToEnd)) out.push(failed(r.endToEnd), "");
  else {
    const e = r.endToEnd;
    const steps: Array<RateStep & { kind: string }> = [
      ...e.fixedRates.map((s) => ({ ...s, kind: "fixed" })),
      ...e.search.probes.map((s) => ({ ...s, kind: "search" })),
    ];
    out.push(
      `\`fraud-scorer serve\` (child process, defaults: max batch 64, budget ${e.budgetMs} ms, int8 model on CPU) against ` +
        `the local broker and Redis; ${e.partitions} partitions; open-loop load from \`src/traffic\` at each rate for ` +
        `${e.warmupS} s (not counted) + ${e.measureS} s. Latency runs from each transaction's scheduled send time to its ` +
        `decision's broker append time (LogAppendTime), so a late load generator counts against us (coordinated-omission ` +
        `safe). Transactions still undecided at the end of the drain window are counted at their age then. ` +
        `${e.scorerStarts} scorer start(s): a step that fails (backlog left, or rules deciding) gets a fresh scorer for the next one.`,
      "",
      table(
        [
          "Rate (tx/s)",
          "Sent at",
          "Decided",
          "Undecided",
          "p50 ms",
          "p95 ms",
          "p99 ms",
          "p99.9 ms",
          "max ms",
          "≤ budget",
          "By the model",
          "Fallback causes",
        ],
        steps.map((s) => [
          `${fmt(s.targetRate)}${s.kind === "search" ? " (search)" : ""}`,
          fmt(s.achievedRate),
          s.decided,
          s.undecided,
          ms(s.endToEnd.p50Ms),
          ms(s.endToEnd.p95Ms),
          ms(s.endToEnd.p99Ms),
          ms(s.endToEnd.p999Ms),
          ms(s.endToEnd.maxMs),
          pct(s.withinBudgetShare),
          pct(1 - s.fallbackShare),
          Object.entries(s.fallbackCauses)
            .map(([cause, n]) => `${cause.replace("FALLBACK_CAUSE_", "").toLowerCase()} ${n}`)
            .join(", ") || "—",
        ]),
      ),
      "",
      `**Highest rate with p99 ≤ ${e.budgetMs} ms and the model deciding at least ${pct(1 - e.search.maxFallbackShare)} ` +
        `of transactions: ${fmt(e.search.highestRateUnderBudget)} tx/s** (bisected between the fixed rates with ` +
        `${e.search.probes.length} probe(s); one run per rate, so ± the noise of this machine). A rate at which the rules ` +
        "decide instead (state call timed out, deferred state lane catching up, budget exhausted) meets the budget only by " +
        "degrading, so it does not count.",
      "",
      "Per-stage breakdown, p50 / p99 in ms, from each Decision's `timings`. State read to state write are per batch and " +
        "taken over the model's decisions only (a rules fallback skips them); queue runs from the record timestamp to " +
        "pick-up by the scoring loop, so it holds producing, the broker, the consumer's fetch and waiting for the batch " +
        "ahead; publish + ack is the broker append time minus `decided_at_ms` (whole milliseconds).",
      "",
      table(
        ["Rate (tx/s)", "model decisions", ...STAGES.map((st) => STAGE_LABELS[st])],
        steps.map((s) => [
          fmt(s.targetRate),
          s.stages.model.count,
          ...STAGES.map((st) =>
            s.stages[st].count > 0 ? `${ms(s.stages[st].p50Ms)} / ${ms(s.stages[st].p99Ms)}` : "—",
          ),
        ]),
      ),
      "",
      chart(
        "end-to-end",
        lineChart(
          (
            [
              ["p50", "p50Ms"],
              ["p99", "p99Ms"],
              ["p99.9", "p999Ms"],
              ["max", "maxMs"],
            ] as const
          ).map(([name, key]) => ({
            name,
            points: steps.map((s) => [s.targetRate, s.endToEnd[key]] as const),
          })),
          {
            title: "End-to-end latency by offered rate",
            xLabel: "offered rate (transactions/s)",
            yLabel: "ms (log scale)",
            logY: true,
            reference: { y: e.budgetMs, label: `budget ${e.budgetMs} ms` },
          },
        ),
      ),
      "",
      chart(
        "stages",
        barChart(
          steps.map((s) => ({
            label: `${fmt(s.targetRate)}/s`,
            bars: STAGES.filter((st) => s.stages[st].count > 0).map((st) => ({
              name: STAGE_LABELS[st],
              value: s.stages[st].p99Ms,
            })),
          })),
          { title: "Stage p99 by offered rate", yLabel: "ms (log scale)", logY: true },
        ),
      ),
      "",
    );
  }

  out.push("## 2. Decode", "");
  if (isError(r.decode)) out.push(failed(r.decode), "");
  else {
    const d = r.decode;
    out.push(
      `${d.messages} simulated transactions, one per record. Protobuf: \`decodeTransactionRecord\` (delimited framing, ` +
        `generated static decoder, \`validateTransaction\`). JSON: \`JSON.parse\` of the UTF-8 record and an ajv-compiled ` +
        `schema with the same rules (bench/sections/transactionJsonSchema.ts). Median of ${d.rounds} alternating rounds.`,
      "",
      table(
        [
          "",
          "ns / message",
          "messages / s (one core)",
          "parse alone, ns",
          "bytes / message",
          "CPU ms per second at 50k/s",
        ],
        [
          ...(
            [
              ["Protobuf (real path)", d.protobuf],
              ["JSON + ajv", d.json],
            ] as const
          ).map(([name, side]) => [
            name,
            fmt(side.nsPerMessage),
            fmt(side.messagesPerSecond),
            fmt(side.parseOnlyNsPerMessage),
            fmt(side.bytesPerMessage),
            fmt(side.cpuMsPerSecondAt50k),
          ]),
          [
            "Protobuf, protobufjs BufferReader (not used)",
            fmt(d.protobufBufferReader.nsPerMessage),
            fmt(Math.round(1e9 / d.protobufBufferReader.nsPerMessage)),
            fmt(d.protobufBufferReader.parseOnlyNsPerMessage),
            fmt(d.protobuf.bytesPerMessage),
            fmt((d.protobufBufferReader.nsPerMessage * 50_000) / 1e6),
          ],
        ],
      ),
      "",
      `**Per message, JSON + ajv costs ${x(d.jsonOverProtobufCost)} what the real Protobuf path costs**, and ` +
        `${x(d.jsonOverProtobufBufferReaderCost)} what the same Protobuf decoder costs on protobufjs's BufferReader. ` +
        "`src/codec/messages.ts` decodes from a plain Uint8Array view on purpose (the BufferReader truncates a string that " +
        "overruns its message instead of failing), which sends every string through protobufjs's JavaScript UTF-8 decoder; " +
        "the last row shows what that choice costs.",
      "",
      chart(
        "decode",
        barChart(
          [
            {
              label: "decode + validate",
              bars: [
                { name: "Protobuf", value: d.protobuf.nsPerMessage },
                { name: "JSON + ajv", value: d.json.nsPerMessage },
                { name: "Protobuf, BufferReader", value: d.protobufBufferReader.nsPerMessage },
              ],
            },
            {
              label: "parse alone",
              bars: [
                { name: "Protobuf", value: d.protobuf.parseOnlyNsPerMessage },
                { name: "JSON + ajv", value: d.json.parseOnlyNsPerMessage },
                { name: "Protobuf, BufferReader", value: d.protobufBufferReader.parseOnlyNsPerMessage },
              ],
            },
          ],
          { title: "Decode cost per message", yLabel: "ns per message" },
        ),
      ),
      "",
    );
  }

  out.push("## 3. Batching", "");
  if (isError(r.batching)) out.push(failed(r.batching), "");
  else {
    const b = r.batching;
    out.push(
      `In process: the real \`scoreBatch\`, int8 model and rules, an in-memory card-state store; an open-loop arrival ` +
        `schedule feeds either the product's \`ScoringQueue\` (continuous: whatever arrived while the last batch ran, ≤ ${b.maxBatch}) ` +
        `or the foil in bench/sections/dynamicBatcher.ts (wait until ${b.maxBatch} arrive or ${b.dynamicMaxWaitMs} ms pass). ` +
        `Time to decision: scheduled arrival → decision published. Back-to-back capacity here: ${fmt(b.capacityPerSecond)} tx/s; ` +
        `the high load is kept under it.`,
      "",
      table(
        [
          "Load",
          "Rate (tx/s)",
          "Continuous p50 / p99 ms",
          "mean batch",
          "Dynamic p50 / p99 ms",
          "mean batch",
          "Dynamic ÷ continuous p50",
          "p99",
        ],
        b.loads.map((l) => [
          l.name,
          fmt(l.ratePerSecond),
          `${ms(l.continuous.timeToDecision.p50Ms)} / ${ms(l.continuous.timeToDecision.p99Ms)}`,
          fmt(l.continuous.meanBatch),
          `${ms(l.dynamic.timeToDecision.p50Ms)} / ${ms(l.dynamic.timeToDecision.p99Ms)}`,
          fmt(l.dynamic.meanBatch),
          x(l.p50Ratio),
          x(l.p99Ratio),
        ]),
      ),
      "",
      chart(
        "batching",
        barChart(
          b.loads.map((l) => ({
            label: `${l.name} (${fmt(l.ratePerSecond)}/s)`,
            bars: [
              { name: "continuous p50", value: l.continuous.timeToDecision.p50Ms },
              { name: "continuous p99", value: l.continuous.timeToDecision.p99Ms },
              { name: "dynamic p50", value: l.dynamic.timeToDecision.p50Ms },
              { name: "dynamic p99", value: l.dynamic.timeToDecision.p99Ms },
            ],
          })),
          { title: "Time to decision: continuous vs wait-to-fill batching", yLabel: "ms" },
        ),
      ),
      "",
    );
  }

  out.push("## 4. State", "");
  if (isError(r.state)) out.push(failed(r.state), "");
  else {
    const s = r.state;
    out.push(
      `${s.transactionsPerRound} transactions' card state (${s.stateBytes} bytes + 32-byte MAC) read and written on the same ` +
        "Redis. Pipelined: `RedisCardStateStore.readBatch` + `writeBatch` (HMAC, device HyperLogLogs, compare-and-set Lua " +
        "script with history append: one round trip each). Foil: one awaited GET and one awaited SET per transaction " +
        "(bench/sections/perTransactionStateAccess.ts; does less work). Also shown: the same GET/SET issued for the whole " +
        "batch at once, which ioredis puts on the wire back to back. µs/tx is wall time over a round (median of " +
        `alternating rounds). A Redis PING round trip here: p50 ${fmt(s.redisPingUs.p50)} µs, p99 ${fmt(s.redisPingUs.p99)} µs ` +
        "(loopback); every awaited per-transaction command pays one, so across a network each adds that network's round " +
        "trip per transaction, while the pipelined store pays two per batch. The store itself called once per " +
        `transaction (batch 1) costs ${x(s.storeBatch1OverLargestBatch)} per transaction what it costs per batch of ` +
        `${s.batchSizes.at(-1)!.batchSize}.`,
      "",
      table(
        [
          "Batch",
          "Pipelined µs/tx",
          "batch p50 / p99 ms",
          "of which read / write p50 ms",
          "GET+SET per tx µs/tx",
          "batch p50 / p99 ms",
          "concurrent µs/tx",
          "Per-tx ÷ pipelined",
          "Concurrent ÷ pipelined",
        ],
        s.batchSizes.map((row) => [
          row.batchSize,
          fmt(row.pipelined.usPerTransaction),
          `${ms(row.pipelined.batch.p50Ms)} / ${ms(row.pipelined.batch.p99Ms)}`,
          `${ms(row.pipelinedReadP50Ms)} / ${ms(row.pipelinedWriteP50Ms)}`,
          fmt(row.perTransaction.usPerTransaction),
          `${ms(row.perTransaction.batch.p50Ms)} / ${ms(row.perTransaction.batch.p99Ms)}`,
          fmt(row.perTransactionConcurrent.usPerTransaction),
          x(row.perTransactionOverPipelined),
          x(row.concurrentOverPipelined),
        ]),
      ),
      "",
      chart(
        "state",
        barChart(
          s.batchSizes.map((row) => ({
            label: `batch ${row.batchSize}`,
            bars: [
              { name: "pipelined", value: row.pipelined.usPerTransaction },
              { name: "GET+SET per transaction", value: row.perTransaction.usPerTransaction },
              { name: "GET+SET, concurrent", value: row.perTransactionConcurrent.usPerTransaction },
            ],
          })),
          {
            title: "Card-state round trips: µs per transaction",
            yLabel: "µs per transaction (log scale)",
            logY: true,
          },
        ),
      ),
      "",
    );
  }

  out.push("## 5. Model", "");
  if (isError(r.model)) out.push(failed(r.model), "");
  else {
    const m = r.model;
    out.push(
      `One LSTM step (${m.featureCount} features, hidden ${m.hiddenSize}) on ONNX Runtime, CPU provider, one intra-op thread. ` +
        "int8 = model.int8.onnx through `loadModelRunner` (what `serve` runs on CPU); fp32 = model.onnx opened directly.",
      "",
      table(
        [
          "Precision",
          "Batch",
          "µs / transaction (median step ÷ batch)",
          "incl. stalls (round mean)",
          "step p50 µs",
          "step p99 µs",
        ],
        m.variants.map((v) => [
          v.precision,
          v.batchSize,
          fmt(v.usPerTransaction),
          fmt(v.meanUsPerTransaction),
          fmt(v.stepP50Us),
          fmt(v.stepP99Us),
        ]),
      ),
      "",
      `fp32 ÷ int8: ${x(m.fp32OverInt8AtBatch1)} at batch 1, ${x(m.fp32OverInt8AtLargestBatch)} at the largest batch. ` +
        `Batch 1 ÷ largest batch, per transaction: int8 ${x(m.batch1OverLargestInt8)}, fp32 ${x(m.batch1OverLargestFp32)}.`,
      "",
      chart(
        "model",
        barChart(
          [...new Set(m.variants.map((v) => v.batchSize))].map((batch) => ({
            label: `batch ${batch}`,
            bars: m.variants
              .filter((v) => v.batchSize === batch)
              .map((v) => ({ name: v.precision, value: v.usPerTransaction })),
          })),
          { title: "Model step: µs per transaction", yLabel: "µs per transaction (log scale)", logY: true },
        ),
      ),
      "",
    );
  }

  out.push("## 6. Ceiling", "");
  if (isError(r.ceiling)) out.push(failed(r.ceiling), "");
  else {
    const c = r.ceiling;
    const perf = (p: typeof c.kafkaConsumerPerf | typeof c.kafkaProducerPerf) =>
      "recordsPerSecond" in p ? fmt(p.recordsPerSecond) : `n/a (${p.unavailable})`;
    out.push(
      `A backlog of ${c.records} transactions (${c.recordBytes} bytes each, ${c.partitions} partitions) drained by the scorer ` +
        "and by a passthrough with the same kafkajs consumer and idempotent producer settings but no decoding or scoring " +
        "(bench/sections/ceilingPassthrough.ts), each in its own process; throughput from the output topic's offsets, from the " +
        "first output record to the last. The backlog's records are old, so the scorer decides them by the rules after " +
        "still reading state, stepping the model and writing state (the full work). Kafka's ProducerPerformance and " +
        `ConsumerPerformance (Kafka ${c.kafkaToolsVersion ?? "?"}, records of the same size, acks=all) give the broker's limit.`,
      "",
      table(
        ["", "records / s"],
        [
          ["fraud-scorer serve", fmt(c.scorer.recordsPerSecond)],
          ["kafkajs passthrough", fmt(c.passthrough.recordsPerSecond)],
          ["Kafka ConsumerPerformance", perf(c.kafkaConsumerPerf)],
          ["Kafka ProducerPerformance", perf(c.kafkaProducerPerf)],
        ],
      ),
      "",
      `**The scorer keeps ${pct(c.scorerOverPassthrough)} of the passthrough's throughput**` +
        (c.passthroughOverKafkaConsumer === undefined
          ? "."
          : `; the passthrough itself reaches ${pct(c.passthroughOverKafkaConsumer)} of Kafka's own consumer.`),
      "",
      chart(
        "ceiling",
        barChart(
          [
            {
              label: "records per second",
              bars: [
                { name: "scorer", value: c.scorer.recordsPerSecond },
                { name: "kafkajs passthrough", value: c.passthrough.recordsPerSecond },
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
    );
  }

  out.push("## 7. Cold start", "");
  if (isError(r.coldStart)) out.push(failed(r.coldStart), "");
  else {
    const k = r.coldStart;
    const phases = [
      "healthListeningMs",
      "modelVerified",
      "modelWarm",
      "schemasRegistered",
      "groupJoined",
      "readyMs",
    ] as const;
    const phaseAt = (run: (typeof k.runs)[number], p: (typeof phases)[number]) =>
      p === "healthListeningMs" || p === "readyMs" ? run.timeline[p] : run.timeline.conditionsMetMs[p];
    out.push(
      `\`serve\` spawned with new topics and group, /readyz polled every 20 ms; then ${k.transactions} transactions at ` +
        `${k.ratePerSecond} tx/s. Without warm-up = \`MODEL_WARM_UP=false\`. Milliseconds from spawn; medians in the summary.`,
      "",
      table(
        [
          "Run",
          "Warm-up",
          "health up",
          "model verified",
          "model warm",
          "schemas registered",
          "group joined",
          "ready",
          "first decision ms",
          "its model stage ms",
          `first ${k.transactions}: p50 / max ms`,
        ],
        k.runs.map((run, i) => [
          i + 1,
          run.warmUp ? "on" : "off",
          ...phases.map((p) => fmt(phaseAt(run, p) ?? NaN)),
          ms(run.firstDecisionMs),
          fmt(run.firstDecisionModelUs / 1000),
          `${ms(run.firstDecisions.p50Ms)} / ${ms(run.firstDecisions.maxMs)}`,
        ]),
      ),
      "",
      "The first decision's own stages, ms (everything it paid for first: the consumer's first fetch, the state " +
        "store's first round trips and Lua script load, the model's first run, the producer's first send):",
      "",
      table(
        ["Run", "Warm-up", "end to end", ...STAGES.map((st) => STAGE_LABELS[st])],
        k.runs.map((run, i) => [
          i + 1,
          run.warmUp ? "on" : "off",
          ms(run.firstDecisionMs),
          ...STAGES.map((st) => fmt(run.firstDecisionStagesMs[st])),
        ]),
      ),
      "",
      `The warm-up itself (model verified → model warm) takes ${fmt(warmUpMs(k))} ms (median). ` +
        `Median first decision: **${ms(k.withWarmUp.firstDecisionMs)} ms with warm-up, ${ms(k.withoutWarmUp.firstDecisionMs)} ms without** ` +
        `(${x(k.firstDecisionWithoutOverWith)}; its model stage ${x(k.firstModelStageWithoutOverWith)}). Start to ready: ` +
        `${fmt(k.withWarmUp.startToReadyMs)} ms with warm-up, ${fmt(k.withoutWarmUp.startToReadyMs)} ms without.`,
      "",
      chart(
        "cold-start",
        barChart(
          [
            { label: "warm-up on", v: k.withWarmUp },
            { label: "warm-up off", v: k.withoutWarmUp },
          ].map(({ label, v }) => ({
            label,
            bars: [
              { name: "first decision ms", value: v.firstDecisionMs },
              { name: "its model stage ms", value: v.firstDecisionModelUs / 1000 },
              { name: `first ${k.transactions} p50 ms`, value: v.firstDecisionsP50Ms },
              { name: `first ${k.transactions} max ms`, value: v.firstDecisionsMaxMs },
            ],
          })),
          { title: "First decisions after a cold start", yLabel: "ms (log scale)", logY: true },
        ),
      ),
      "",
    );
  }
  out.push(...loadGeneratorSection(r));
  return { markdown: out.join("\n"), charts };
}
