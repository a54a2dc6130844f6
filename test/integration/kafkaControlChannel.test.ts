import { setTimeout as sleep } from "node:timers/promises";
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import type { ControlRecord } from "../../src/control/controlRecord.js";
import { createKafkaPort } from "../../src/stream/kafka/index.js";
import { KafkaControlChannel } from "../../src/stream/kafkaControlChannel.js";
import { testEndpoints } from "./endpoints.js";

const { kafkaBrokers } = testEndpoints();
const port = createKafkaPort({ clientId: "control-channel-test", brokers: kafkaBrokers.split(",") });
const topic = `control-test-${randomUUID()}`;

const rules = (rulesVersion: string): ControlRecord => ({
  key: "rules",
  file: "rules.yaml",
  rulesVersion,
  text: "rules: []",
  sha256: "0".repeat(64),
  issuedAt: new Date().toISOString(),
  issuedBy: "test",
});

afterAll(async () => {
  const admin = port.admin();
  await admin.deleteTopics([topic]).catch(() => {});
  await admin.close();
});

describe("the control channel on a compacted Kafka topic", () => {
  it("gives a new follower the latest record of each key, then each new one", async () => {
    const channel = new KafkaControlChannel({ port, topic });
    await channel.ensureTopic();
    await channel.publish(rules("r1"));
    await channel.publish(rules("r2"));
    expect((await channel.latest("rules"))?.key === "rules").toBe(true);
    const seen: string[] = [];
    const subscription = await channel.follow(
      async (r) =>
        void seen.push(r.key === "rules" ? r.rulesVersion : r.key === "model" ? r.modelVersion : r.key),
    );
    expect(seen).toEqual(["r2"]);
    await channel.publish(rules("r3"));
    for (let i = 0; i < 100 && seen.length < 2; i++) await sleep(100);
    await subscription.stop();
    expect(seen).toEqual(["r2", "r3"]);
    const latest = await channel.latest("rules");
    expect(latest?.key === "rules" && latest.rulesVersion).toBe("r3");
    expect(await channel.latest("model")).toBeUndefined();
  });
});
