import { MultipleErrors, NetworkError, ProtocolError, ResponseError } from "@platformatic/kafka";
import { describe, expect, it } from "vitest";
import { isConcurrentTransactions } from "../../src/stream/kafka/clientErrorKind.js";
import { baseClientOptions, RETRY_DELAY_MS, retryDelayMs } from "../../src/stream/kafka/clientOptions.js";

/** What the client hands its retry delay when AddPartitionsToTxn (API 24, v5) is refused per partition. */
const addPartitionsRefused = (...codes: number[]) =>
  new ResponseError(
    24,
    5,
    Object.fromEntries(
      codes.map((code, i) => [`/results_by_topic_v3_and_below/0/results_by_partition/${i}`, [code, null]]),
    ),
    {},
  );
const CONCURRENT_TRANSACTIONS = 51;
const INVALID_TXN_STATE = 48;

describe("the Kafka clients' retry delay", () => {
  it("retries a transaction still completing after 20 ms, as the Java client does, then backs off", () => {
    const refused = addPartitionsRefused(CONCURRENT_TRANSACTIONS, CONCURRENT_TRANSACTIONS);
    expect(isConcurrentTransactions(refused)).toBe(true);
    const delays = [1, 2, 3, 4, 5].map((attempt) => retryDelayMs(attempt, refused));
    expect(delays).toEqual([20, 20, 20, 250, 1000]);
    // The window before the call fails is no shorter than at the usual delay (5 retries).
    expect(delays.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(5 * RETRY_DELAY_MS);
  });

  it("keeps the usual delay for anything else, or a mix", () => {
    expect(retryDelayMs(1, new NetworkError("Connection to 127.0.0.1:9092 failed."))).toBe(RETRY_DELAY_MS);
    expect(retryDelayMs(1, addPartitionsRefused(CONCURRENT_TRANSACTIONS, INVALID_TXN_STATE))).toBe(
      RETRY_DELAY_MS,
    );
    expect(retryDelayMs(1, new MultipleErrors("send failed.", []))).toBe(RETRY_DELAY_MS);
    expect(isConcurrentTransactions(new ProtocolError("NOT_LEADER_OR_FOLLOWER"))).toBe(false);
  });

  it("is the delay every client is made with", () => {
    const options = baseClientOptions({ brokers: ["127.0.0.1:9092"], clientId: "fraud-scorer" }, "sink");
    const delay = options.retryDelay as (
      c: unknown,
      op: string,
      attempt: number,
      r: number,
      e: unknown,
    ) => number;
    expect(typeof delay).toBe("function");
    const refused = addPartitionsRefused(CONCURRENT_TRANSACTIONS);
    expect(delay(undefined, "addPartitionsToTransaction", 1, 5, refused)).toBe(20);
    expect(delay(undefined, "fetch", 1, 5, new NetworkError("gone"))).toBe(RETRY_DELAY_MS);
  });
});
