// A scorer whose broker goes away for good: readiness drops and the process stops through the
// one fatal path with one fatal line, instead of hanging on as a member nobody assigns. The
// broker is a private one on spare ports (stopping the shared one would break every other run).
import { setTimeout as sleep } from "node:timers/promises";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startPrivateKafka, type PrivateKafka } from "../../chaos/privateKafka.js";
import { createRunTopics, type RunTopics } from "../../chaos/runTopics.js";
import { ScorerChild, scorerEnvironment } from "../../src/tools/scorerChild.js";
import { committedModelDir } from "../support/committedModel.js";
import { testEndpoints } from "./endpoints.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const endpoints = testEndpoints();

let kafka: PrivateKafka;
let topics: RunTopics;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "consumer-crash-"));
  kafka = await startPrivateKafka({ root, dir: join(dir, "kafka") });
  topics = await createRunTopics(kafka.internalBrokers, "crash", { partitions: 2 });
}, 300_000);

afterAll(async () => {
  await kafka?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function readyStatus(port: number): Promise<number | "down"> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(1_000) })).status;
  } catch {
    return "down";
  }
}

it("drops readiness and exits through the fatal path when its broker is gone for good", async () => {
  const logFile = join(dir, "scorer.log");
  const scorer = await ScorerChild.start({
    root,
    logFile,
    env: scorerEnvironment({
      kafkaBrokers: kafka.brokers,
      schemaRegistryUrl: endpoints.schemaRegistryUrl,
      redisUrl: endpoints.redisUrl,
      topics,
      groupId: `scorer-${topics.transactions}`,
      namespace: `crash-${topics.transactions.slice(-8)}`,
      modelDir: committedModelDir(),
      hmacKeyHex: randomBytes(32).toString("hex"),
      overrides: { KAFKA_SESSION_TIMEOUT_MS: "6000" },
    }),
  });
  const exited = scorer.exited();
  expect(await readyStatus(scorer.port)).toBe(200);

  await kafka.kill(0);
  // Not ready (503) while it notices; gone once it has stopped. Either way no longer 200.
  let status: number | "down" = 200;
  const deadline = Date.now() + 90_000;
  while (status === 200 && Date.now() < deadline) {
    await sleep(250);
    status = await readyStatus(scorer.port);
  }
  expect(status).not.toBe(200);

  const code = await Promise.race([
    exited,
    new Promise<"running">((r) => setTimeout(() => r("running"), 90_000)),
  ]);
  if (code === "running") await scorer.stop("SIGKILL");
  expect(code).not.toBe("running");
  expect(code).not.toBe(0);
  const fatal = readFileSync(logFile, "utf8")
    .split("\n")
    .filter((l) => l.includes('"level":"fatal"') || l.includes('"level":60'));
  expect(fatal, scorer.logTail(40)).toHaveLength(1);
  expect(fatal[0]).toMatch(/the consumer stopped/);
}, 300_000);
