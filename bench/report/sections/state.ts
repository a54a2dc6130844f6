// Report chapter 4: card state read and written per batch against per transaction.
import type { StateResult } from "../../sections/state.js";
import { barChart } from "../../../src/tools/svgCharts.js";
import { fmt, ms, table, x } from "../reportFormat.js";
import type { SectionRenderer } from "../sectionRenderer.js";

export const stateReport: SectionRenderer<StateResult> = {
  heading: "4. State",

  summaryRows(s) {
    const rows: string[][] = [];
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
    return rows;
  },

  chapter: (s, chart) => [
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
  ],
};
