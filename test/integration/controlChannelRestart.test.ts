// Promotions after a broker restart: the control topic's follower rides out a broker that is
// away (its reader crashes after the client's retries and is replaced after a backoff) and a
// record published once the broker is back reaches it, with nothing applied twice. The broker
// is a private one on spare ports: stopping the shared one would break every other run.
import { setTimeout as sleep } from "node:timers/promises";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startPrivateKafka, type PrivateKafka } from "../../chaos/privateKafka.js";
import type { ControlRecord } from "../../src/control/controlRecord.js";
import { createKafkaPort } from "../../src/stream/kafka/index.js";
import { KafkaControlChannel } from "../../src/stream/kafkaControlChannel.js";

const root = fileURLToPath(new URL("../../", import.meta.url));

let kafka: PrivateKafka;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "control-restart-"));
  kafka = await startPrivateKafka({ root, dir: join(dir, "kafka") });
}, 300_000);

afterAll(async () => {
  await kafka?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const rules = (rulesVersion: string): ControlRecord => ({
  key: "rules",
  file: "rules.yaml",
  rulesVersion,
  text: "rules: []",
  sha256: "0".repeat(64),
  issuedAt: new Date().toISOString(),
  issuedBy: "test",
});

async function until(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

it("applies a promotion published after the broker came back, and none twice", async () => {
  const port = createKafkaPort({ clientId: "control-restart-test", brokers: kafka.brokers.split(",") });
  const crashes: unknown[] = [];
  const channel = new KafkaControlChannel({
    port,
    topic: "fraud-scorer.control",
    onFollowCrashed: (err) => crashes.push(err),
  });
  await channel.ensureTopic();
  await channel.publish(rules("r1"));
  const seen: string[] = [];
  const subscription = await channel.follow(
    async (r) => void seen.push(r.key === "rules" ? r.rulesVersion : r.key),
  );
  try {
    await channel.publish(rules("r2"));
    await until("r2", () => seen.includes("r2"), 30_000);

    await kafka.kill(0);
    // The reader gives up after the client's retries: the defect was that nothing replaced it.
    await until("the follower's reader to crash", () => crashes.length > 0, 120_000);
    await kafka.restart(0);

    // The broker may take a moment to lead the partition again: publish until accepted.
    const deadline = Date.now() + 120_000;
    for (;;) {
      try {
        await channel.publish(rules("r3"));
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await sleep(1_000);
      }
    }
    await until("r3 after the restart", () => seen.includes("r3"), 120_000);
    expect(seen).toEqual(["r1", "r2", "r3"]);
  } finally {
    await subscription.stop();
  }
}, 600_000);
