// 4. State: RedisCardStateStore's one pipelined read and one pipelined write per batch against
// one GET and one SET per transaction (perTransactionStateAccess.ts), on the same Redis, over
// the same transactions, in alternating rounds.
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { Transaction, encodeTransactionPayload } from "../../src/codec/messages.js";
import { emptyCardState } from "../../src/features/cardState.js";
import { encodeCardState } from "../../src/features/cardStateCodec.js";
import { FEATURE_SCHEMA_VERSION } from "../../src/features/featureVector.js";
import { RedisCardStateStore } from "../../src/state/redisCardStateStore.js";
import { computeFeatureHashes } from "../../src/ingest/featureHashes.js";
import type { CardStateWrite, DeviceTouch } from "../../src/scoring/ports.js";
import type { BenchContext } from "../support/benchContext.js";
import { alternatingRounds, round1, round3 } from "../support/alternatingRounds.js";
import { LatencyHistogram, type LatencySummary } from "../../src/tools/latencyHistogram.js";
import { PerTransactionStateAccess, type StateAccess } from "./perTransactionStateAccess.js";

export interface StateSide {
  readonly usPerTransaction: number;
  /** Read + write of one batch (for the foils: of the same transactions, one by one). */
  readonly batch: LatencySummary;
}

export interface StateBatchSize {
  readonly batchSize: number;
  readonly pipelined: StateSide;
  readonly perTransaction: StateSide;
  readonly perTransactionConcurrent: StateSide;
  /** The pipelined batch's two round trips, each on its own. */
  readonly pipelinedReadP50Ms: number;
  readonly pipelinedWriteP50Ms: number;
  /** per-transaction GET/SET cost ÷ pipelined cost, per transaction */
  readonly perTransactionOverPipelined: number;
  readonly concurrentOverPipelined: number;
}

export interface StateResult {
  /** One PING, awaited: the round trip every per-transaction command pays on this machine. */
  readonly redisPingUs: { readonly p50: number; readonly p99: number };
  readonly transactionsPerRound: number;
  readonly stateBytes: number;
  readonly batchSizes: readonly StateBatchSize[];
  /**
   * The same store, same work, called per transaction (batch 1) ÷ per largest batch, per
   * transaction: what batching the round trips buys with nothing else changed.
   */
  readonly storeBatch1OverLargestBatch: number;
}

const TTL_MS = 900_000;

interface Tx {
  readonly cardId: string;
  readonly touch: DeviceTouch | undefined;
  readonly payload: Uint8Array;
}

export async function state(ctx: BenchContext): Promise<StateResult> {
  const { batchSizes, rounds, transactionsPerRound } = ctx.plan.state;
  ctx.log(
    `state: pipelined store vs GET+SET per transaction; batches of ${batchSizes.join(", ")}, ${rounds} rounds`,
  );
  const redis = new Redis(ctx.endpoints.redisUrl, { maxRetriesPerRequest: 1 });
  const namespace = ctx.namespace("state");
  const store = new RedisCardStateStore({
    redis,
    namespace,
    modelVersion: "bench",
    featureSchemaVersion: FEATURE_SCHEMA_VERSION,
    hmacKey: randomBytes(32),
    ttlMs: TTL_MS,
  });
  const naive = new PerTransactionStateAccess(redis, namespace, TTL_MS);
  const source = ctx.traffic.take(transactionsPerRound);
  const txs: Tx[] = Array.from({ length: transactionsPerRound }, (_, i) => {
    const tx = Transaction.create(source.at(i).tx);
    const device = computeFeatureHashes(tx).device;
    return {
      cardId: tx.cardId,
      touch: device !== 0 ? { deviceKey: device.toString(16), cardId: tx.cardId } : undefined,
      payload: encodeTransactionPayload(tx),
    };
  });
  const template = emptyCardState(32);
  template.h = Float32Array.from({ length: 32 }, () => Math.random() - 0.5);
  template.c = Float32Array.from({ length: 32 }, () => Math.random() - 0.5);
  const stateBytes = encodeCardState(template);
  const naiveValue = Buffer.concat([stateBytes, randomBytes(32)]); // same size as state + MAC
  let position = 0;

  try {
    const ping = new LatencyHistogram();
    for (let i = 0; i < 500; i++) {
      const t0 = performance.now();
      await redis.ping();
      if (i >= 100) ping.recordMs(performance.now() - t0);
    }
    const redisPingUs = {
      p50: round1(ping.percentileMs(50) * 1000),
      p99: round1(ping.percentileMs(99) * 1000),
    };
    ctx.log(`  Redis PING round trip p50 ${redisPingUs.p50} µs`);
    const out: StateBatchSize[] = [];
    for (const batchSize of batchSizes) {
      const batches: Tx[][] = [];
      for (let i = 0; i < txs.length; i += batchSize) batches.push(txs.slice(i, i + batchSize));
      const histograms = {
        pipelined: new LatencyHistogram(),
        sequential: new LatencyHistogram(),
        concurrent: new LatencyHistogram(),
        read: new LatencyHistogram(),
        write: new LatencyHistogram(),
      };
      const timed = async (h: LatencyHistogram, work: () => Promise<unknown>) => {
        const t0 = performance.now();
        await work();
        h.recordMs(performance.now() - t0);
      };
      const pipelinedRound = async () => {
        for (const batch of batches)
          await timed(histograms.pipelined, async () => {
            const cardIds = [...new Set(batch.map((t) => t.cardId))];
            const t0 = performance.now();
            await store.readBatch({
              cardIds,
              deviceTouches: batch.flatMap((t) => (t.touch ? [t.touch] : [])),
              nowMs: Date.now(),
            });
            const t1 = performance.now();
            histograms.read.recordMs(t1 - t0);
            const writes: CardStateWrite[] = cardIds.map((cardId) => ({
              cardId,
              bytes: stateBytes,
              position: ++position,
              history: batch
                .filter((t) => t.cardId === cardId)
                .map((t) => ({ payload: t.payload, deviceCardCount: 1 })),
            }));
            await store.writeBatch(writes);
            histograms.write.recordMs(performance.now() - t1);
          });
        return txs.length;
      };
      const accesses = batches.map((batch) =>
        batch.map((t): StateAccess => ({ cardId: t.cardId, value: naiveValue })),
      );
      const sequentialRound = async () => {
        for (const batch of accesses) await timed(histograms.sequential, () => naive.sequential(batch));
        return txs.length;
      };
      const concurrentRound = async () => {
        for (const batch of accesses) await timed(histograms.concurrent, () => naive.concurrent(batch));
        return txs.length;
      };
      const [pipelined, sequential, concurrent] = await alternatingRounds(
        [
          { name: "pipelined", round: pipelinedRound },
          { name: "per-transaction", round: sequentialRound },
          { name: "per-transaction-concurrent", round: concurrentRound },
        ],
        rounds,
        { afterWarmUp: () => Object.values(histograms).forEach((h) => h.reset()) },
      );
      const side = (ns: number, h: LatencyHistogram): StateSide => ({
        usPerTransaction: round1(ns / 1000),
        batch: h.summary(),
      });
      const row: StateBatchSize = {
        batchSize,
        pipelined: side(pipelined!.nsPerUnit, histograms.pipelined),
        perTransaction: side(sequential!.nsPerUnit, histograms.sequential),
        perTransactionConcurrent: side(concurrent!.nsPerUnit, histograms.concurrent),
        pipelinedReadP50Ms: histograms.read.percentileMs(50),
        pipelinedWriteP50Ms: histograms.write.percentileMs(50),
        perTransactionOverPipelined: round3(sequential!.nsPerUnit / pipelined!.nsPerUnit),
        concurrentOverPipelined: round3(concurrent!.nsPerUnit / pipelined!.nsPerUnit),
      };
      out.push(row);
      ctx.log(
        `  batch ${batchSize}: pipelined ${row.pipelined.usPerTransaction} µs/tx, GET+SET per tx ${row.perTransaction.usPerTransaction} µs/tx ` +
          `(×${row.perTransactionOverPipelined}), concurrent ${row.perTransactionConcurrent.usPerTransaction} µs/tx`,
      );
    }
    const smallest = out.reduce((a, b) => (b.batchSize < a.batchSize ? b : a));
    const largest = out.reduce((a, b) => (b.batchSize > a.batchSize ? b : a));
    return {
      redisPingUs,
      transactionsPerRound,
      stateBytes: stateBytes.length,
      batchSizes: out,
      storeBatch1OverLargestBatch: round3(
        smallest.pipelined.usPerTransaction / largest.pipelined.usPerTransaction,
      ),
    };
  } finally {
    redis.disconnect();
  }
}
