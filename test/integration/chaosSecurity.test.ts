// The scorer through Kafka SASL_SSL (SCRAM-SHA-512) and Redis with TLS and an ACL user, on a
// private broker and Redis with certificates made for the run; and start-up that stops with
// one clear line, not a crash loop, on a wrong password or a certificate it must not trust.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditDecisions } from "../../chaos/decisionAudit.js";
import { makeLocalCertificates, type LocalCertificates } from "../../chaos/localCertificates.js";
import { auditLogs } from "../../chaos/logAudit.js";
import { startPrivateKafka, type PrivateKafka } from "../../chaos/privateKafka.js";
import { startPrivateRedis, type PrivateRedis } from "../../stack/privateRedis.js";
import { createRunTopics, type RunTopics } from "../../chaos/runTopics.js";
import { readWholeTopic } from "../../chaos/topicReader.js";
import { ScorerChild, scorerEnvironment } from "../../src/tools/scorerChild.js";
import { committedModelDir } from "../support/committedModel.js";
import { testEndpoints } from "./endpoints.js";
import { makeTransactions, publishAndAwaitDecisions } from "./support/transactionTraffic.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const endpoints = testEndpoints();
const kafkaPassword = randomBytes(12).toString("hex");
const redisPassword = randomBytes(12).toString("hex");
const hmacKeyHex = randomBytes(32).toString("hex");

let certificates: LocalCertificates;
let kafka: PrivateKafka;
let redis: PrivateRedis;
let topics: RunTopics;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "chaos-security-"));
  certificates = makeLocalCertificates(join(dir, "tls"));
  [kafka, redis] = await Promise.all([
    startPrivateKafka({
      root,
      dir: join(dir, "kafka"),
      secure: { keystoreFile: certificates.keystoreFile, user: "scorer", password: kafkaPassword },
    }),
    startPrivateRedis({
      tls: { certFile: certificates.certFile, keyFile: certificates.keyFile, caFile: certificates.caFile },
      user: { name: "scorer", password: redisPassword },
    }),
  ]);
  topics = await createRunTopics(kafka.internalBrokers, "secure", { partitions: 2 });
}, 300_000);

afterAll(async () => {
  await kafka?.stop();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The scorer's environment on the secured services; `overrides` break one thing at a time. */
const secureEnv = (overrides: Record<string, string> = {}): Record<string, string> =>
  scorerEnvironment({
    kafkaBrokers: kafka.brokers,
    schemaRegistryUrl: endpoints.schemaRegistryUrl,
    // No credentials in the URL: the ACL user, its password and the CA come from their keys.
    redisUrl: `rediss://127.0.0.1:${redis.port}`,
    topics,
    groupId: `scorer-${topics.transactions}`,
    namespace: `secure-${topics.transactions.slice(-8)}`,
    modelDir: committedModelDir(),
    hmacKeyHex,
    overrides: {
      LOG_LEVEL: "info",
      KAFKA_SSL: "true",
      KAFKA_SSL_CA_FILE: certificates.caFile,
      KAFKA_SASL_MECHANISM: "scram-sha-512",
      KAFKA_SASL_USERNAME: "scorer",
      KAFKA_SASL_PASSWORD: kafkaPassword,
      REDIS_USERNAME: "scorer",
      REDIS_PASSWORD: redisPassword,
      REDIS_TLS_CA_FILE: certificates.caFile,
      ...overrides,
    },
  });

async function stateKeysWritten(): Promise<number> {
  const client = new Redis(`rediss://scorer:${redisPassword}@127.0.0.1:${redis.port}`, {
    tls: { ca: [readFileSync(certificates.caFile, "utf8")] },
  });
  try {
    const keys = await client.keys(`secure-${topics.transactions.slice(-8)}:cardstate:*`);
    return keys.length;
  } finally {
    client.disconnect();
  }
}

/** Runs `serve` until it exits (or 90 s pass) and returns its exit code and output lines. */
async function serveUntilExit(
  env: Record<string, string>,
): Promise<{ code: number | null; lines: string[] }> {
  const child = spawn(process.execPath, ["bin/fraud-scorer.js", "serve"], {
    cwd: root,
    env: { ...process.env, ...env, HTTP_PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr.on("data", (c: Buffer) => (output += c.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
  const [code] = (await once(child, "exit")) as [number | null];
  clearTimeout(timer);
  return { code, lines: output.split("\n").filter((l) => l.trim() !== "") };
}

/**
 * What an operator reads as "why it stopped": fatal log lines and anything that is not a log
 * line (an uncaught error's stack). The Kafka client's own retry errors may come before them.
 */
const failureLines = (lines: readonly string[]) => lines.filter((l) => /"level":"fatal"|^[^{]/.test(l));

describe("security", () => {
  it("scores through Kafka SASL_SSL (SCRAM-SHA-512) and Redis over TLS with an ACL user, and logs no secret", async () => {
    const txs = makeTransactions(300, { cards: 30, prefix: "sec" });
    const logFile = join(mkdtempSync(join(tmpdir(), "chaos-security-log-")), "scorer.log");

    const scorer = await ScorerChild.start({ root, env: secureEnv(), logFile });
    try {
      await publishAndAwaitDecisions(kafka.internalBrokers, topics, txs, { timeoutMs: 120_000 });
    } finally {
      await scorer.stop();
    }
    const audit = auditDecisions(
      await readWholeTopic(kafka.internalBrokers, topics.transactions),
      await readWholeTopic(kafka.internalBrokers, topics.decisions),
    );
    const logs = auditLogs(
      [logFile],
      [kafkaPassword, redisPassword, hmacKeyHex],
      new Set(audit.perCard.keys()),
    );

    expect(audit).toMatchObject({ sent: 300, lost: 0 });
    // The scorer wrote card state through TLS as the ACL user (also for rules-decided batches:
    // their state work is deferred, not dropped).
    expect(await stateKeysWritten()).toBeGreaterThanOrEqual(30);
    expect(logs.secretLeaks).toBe(0);
    expect(readFileSync(logFile, "utf8")).toContain('"hmacKey":"[redacted]"');
  }, 300_000);

  it("stops start-up with one clear line on a wrong Kafka password", async () => {
    const { code, lines } = await serveUntilExit(secureEnv({ KAFKA_SASL_PASSWORD: "not-the-password" }));

    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    const failures = failureLines(lines);
    expect(failures, lines.join("\n")).toHaveLength(1);
    expect(failures[0]).toMatch(/SASL|authenticat/i);
    expect(lines.join("\n")).not.toContain(kafkaPassword);
  }, 180_000);

  it("stops start-up with one clear line when the broker's certificate is not trusted", async () => {
    const { code, lines } = await serveUntilExit(secureEnv({ KAFKA_SSL_CA_FILE: certificates.otherCaFile }));

    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    const failures = failureLines(lines);
    expect(failures, lines.join("\n")).toHaveLength(1);
    expect(failures[0]).toMatch(/certificate/i);
  }, 180_000);
});
