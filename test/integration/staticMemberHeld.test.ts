// KIP-848 static membership: a scorer SIGKILLed without leaving still holds its
// group.instance.id on the broker until the session expires. A successor started with the same
// id is refused (UNRELEASED_INSTANCE_ID); it must say so in one fatal line and exit, not fail
// with a stack trace or hang as a member without partitions.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createRunTopics, deleteRunTopics, type RunTopics } from "../../chaos/runTopics.js";
import { ScorerChild, scorerEnvironment } from "../../src/tools/scorerChild.js";
import { committedModelDir } from "../support/committedModel.js";
import { testEndpoints } from "./endpoints.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const endpoints = testEndpoints();
let topics: RunTopics;

beforeAll(async () => {
  topics = await createRunTopics(endpoints.kafkaBrokers, "held", { partitions: 2 });
}, 120_000);

afterAll(async () => {
  await deleteRunTopics(endpoints.kafkaBrokers, topics);
});

it("a successor refused the static instance id of a killed member stops with one fatal line", async () => {
  const env = scorerEnvironment({
    kafkaBrokers: endpoints.kafkaBrokers,
    schemaRegistryUrl: endpoints.schemaRegistryUrl,
    redisUrl: endpoints.redisUrl,
    topics,
    groupId: `scorer-${topics.transactions}`,
    namespace: `held-${topics.transactions.slice(-8)}`,
    modelDir: committedModelDir(),
    hmacKeyHex: randomBytes(32).toString("hex"),
    overrides: { KAFKA_GROUP_PROTOCOL: "consumer", KAFKA_GROUP_INSTANCE_ID: "scorer-held-1" },
  });
  const first = await ScorerChild.start({ root, env });
  await first.stop("SIGKILL");

  const successor = spawn(process.execPath, ["bin/fraud-scorer.js", "serve"], {
    cwd: root,
    env: { ...process.env, ...env, HTTP_PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  successor.stdout.on("data", (c: Buffer) => (output += c.toString()));
  successor.stderr.on("data", (c: Buffer) => (output += c.toString()));
  const timer = setTimeout(() => successor.kill("SIGKILL"), 90_000);
  const [code] = (await once(successor, "exit")) as [number | null];
  clearTimeout(timer);

  const lines = output.split("\n").filter((l) => l.trim() !== "");
  const failures = lines.filter((l) => /"level":"fatal"|^[^{]/.test(l));
  expect(code, output).toBe(1);
  expect(failures, output).toHaveLength(1);
  const { msg } = JSON.parse(failures[0]!) as { msg: string };
  expect(msg).toMatch(/still holds group\.instance\.id "scorer-held-1"/);
}, 240_000);
