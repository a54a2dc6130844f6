// One kafkajs client built from validated config; kafkajs logs go to our pino logger.
import { readFileSync } from "node:fs";
import { Kafka, logLevel, type KafkaConfig, type SASLOptions } from "kafkajs";
import type { Logger } from "pino";

export interface KafkaClientOptions {
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
  readonly logger: Logger;
}

const levelName: Record<number, "error" | "warn" | "info" | "debug"> = {
  [logLevel.ERROR]: "error",
  [logLevel.WARN]: "warn",
  [logLevel.INFO]: "info",
  [logLevel.DEBUG]: "debug",
};

export function createKafka({ brokers, clientId, ssl, sasl, logger }: KafkaClientOptions): Kafka {
  const kafkaLog = logger.child({ component: "kafkajs" });
  const config: KafkaConfig = {
    clientId,
    brokers: [...brokers],
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ level, log }) => {
        const { message, ...extra } = log;
        kafkaLog[levelName[level] ?? "info"](extra, message);
      },
  };
  if (ssl?.enabled) {
    config.ssl = {
      rejectUnauthorized: ssl.rejectUnauthorized ?? true,
      ...(ssl.caFile ? { ca: [readFileSync(ssl.caFile, "utf8")] } : {}),
      ...(ssl.certFile ? { cert: readFileSync(ssl.certFile, "utf8") } : {}),
      ...(ssl.keyFile ? { key: readFileSync(ssl.keyFile, "utf8") } : {}),
    };
  }
  if (sasl)
    config.sasl = {
      mechanism: sasl.mechanism,
      username: sasl.username,
      password: sasl.password,
    } as SASLOptions;
  return new Kafka(config);
}
