// Connection settings shared by every client the adapter makes, from our validated config.
import { readFileSync } from "node:fs";
import type { BaseOptions } from "@platformatic/kafka";
import { isConcurrentTransactions } from "./clientErrorKind.js";

export interface KafkaConnectionSettings {
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly ssl?:
    | {
        readonly enabled: boolean;
        readonly caFile?: string | undefined;
        readonly certFile?: string | undefined;
        readonly keyFile?: string | undefined;
        readonly rejectUnauthorized?: boolean | undefined;
      }
    | undefined;
  readonly sasl?:
    | {
        readonly mechanism: "plain" | "scram-sha-256" | "scram-sha-512";
        readonly username: string;
        readonly password: string;
      }
    | undefined;
}

/** Between a failed request's attempts, for every client (and between a sink's re-sends). */
export const RETRY_DELAY_MS = 250;
const RETRIES = 5;

/**
 * Exactly-once: a transaction begun as soon as the last one committed finds the coordinator
 * still writing that one's markers, and its first AddPartitionsToTxn is answered
 * CONCURRENT_TRANSACTIONS for a few milliseconds. Retried RETRY_DELAY_MS later, about one
 * delivery in five waited 250 ms for it (33 of 149 in 10 s of `demo --rate 1000` with
 * KAFKA_EXACTLY_ONCE: p99 508-549 ms, 43-51 % of decisions the rules' for want of budget).
 * The Java client retries this one case after 20 ms (TransactionManager's
 * ADD_PARTITIONS_RETRY_BACKOFF_MS, KAFKA-5482); so do we for the first attempts, then the usual
 * delays, so the whole window is no shorter than before (1,310 ms against 5 × 250).
 */
const CONCURRENT_TRANSACTIONS_DELAYS_MS = [20, 20, 20, 250, 1000] as const;

/** How long a failed request waits before its `attempt`-th retry (1 for the first). */
export function retryDelayMs(attempt: number, error: unknown): number {
  if (!isConcurrentTransactions(error)) return RETRY_DELAY_MS;
  const delays = CONCURRENT_TRANSACTIONS_DELAYS_MS;
  return delays[Math.min(attempt, delays.length) - 1] ?? RETRY_DELAY_MS;
}

const saslMechanism = {
  plain: "PLAIN",
  "scram-sha-256": "SCRAM-SHA-256",
  "scram-sha-512": "SCRAM-SHA-512",
} as const;

export function baseClientOptions(
  { brokers, clientId, ssl, sasl }: KafkaConnectionSettings,
  suffix: string,
): BaseOptions {
  const options: BaseOptions = {
    clientId: `${clientId}-${suffix}`,
    bootstrapBrokers: [...brokers],
    autocreateTopics: false,
    // Bounded so a broker that is gone surfaces as an error within seconds, not minutes.
    connectTimeout: 5_000,
    retries: RETRIES,
    retryDelay: (_client, _operation, attempt, _retries, error) => retryDelayMs(attempt, error),
  };
  if (ssl?.enabled) {
    options.tls = {
      rejectUnauthorized: ssl.rejectUnauthorized ?? true,
      ...(ssl.caFile ? { ca: [readFileSync(ssl.caFile, "utf8")] } : {}),
      ...(ssl.certFile ? { cert: readFileSync(ssl.certFile, "utf8") } : {}),
      ...(ssl.keyFile ? { key: readFileSync(ssl.keyFile, "utf8") } : {}),
    };
  }
  if (sasl)
    options.sasl = {
      mechanism: saslMechanism[sasl.mechanism],
      username: sasl.username,
      password: sasl.password,
    };
  return options;
}
