// Connection settings shared by every client the adapter makes, from our validated config.
import { readFileSync } from "node:fs";
import type { BaseOptions } from "@platformatic/kafka";

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
    retryDelay: RETRY_DELAY_MS,
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
