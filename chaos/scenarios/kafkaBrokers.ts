// Kafka failing, on brokers of the suite's own: a single broker SIGKILLed and restarted, one of
// three brokers (replication 3, min.insync.replicas 2) SIGKILLed, and a broker behind a
// delaying proxy. The shared broker on 9092 is never touched.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startDelayProxy } from "../delayProxy.js";
import { faultRun } from "../faultRun.js";
import { ms, outcome } from "../outcome.js";
import { startPrivateKafka } from "../privateKafka.js";
import { check, type Scenario } from "../scenario.js";
import { slowDependency } from "./slowDependency.js";

const STALL_TARGET_MS = 5_000;
const kafkaDir = () => mkdtempSync(join(tmpdir(), "chaos-kafka-"));

export const brokerRestartScenario: Scenario = {
  name: "broker-restart",
  summary: "a single-node Kafka SIGKILLed under load and started again 5 s later",
  async run(ctx) {
    const rate = 1_000;
    const durationS = Math.max(30, Math.round(60 * ctx.scale));
    const kafka = await startPrivateKafka({ root: ctx.root, dir: kafkaDir() });
    try {
      const result = await faultRun(
        ctx,
        { label: "brokerkill", ratePerSecond: rate, durationS, kafkaBrokers: kafka.brokers },
        async ({ at }) => {
          await at(durationS * 300);
          await kafka.kill(0);
          ctx.log("  broker SIGKILLed");
          await sleep(5_000);
          await kafka.restart(0);
          ctx.log("  broker listening again");
        },
      );
      const d = result.decisions;
      return outcome(`${rate} tx/s × ${durationS} s, broker down ~5 s + restart`, result, [
        check("duplicates counted (at-least-once)", true, String(d.duplicates)),
        check("longest partition stall reported", true, ms(d.longestStallMs)),
      ]);
    } finally {
      await kafka.stop();
    }
  },
};

export const threeBrokersScenario: Scenario = {
  name: "three-brokers",
  summary: "3-broker KRaft (replication 3, min.insync.replicas 2); one broker SIGKILLed, restarted later",
  async run(ctx) {
    const rate = 1_000;
    const durationS = Math.max(30, Math.round(90 * ctx.scale));
    const kafka = await startPrivateKafka({ root: ctx.root, dir: kafkaDir(), nodes: 3 });
    let victim = -1;
    try {
      const result = await faultRun(
        ctx,
        {
          label: "3brokers",
          ratePerSecond: rate,
          durationS,
          kafkaBrokers: kafka.brokers,
          replicationFactor: 3,
        },
        async ({ at }) => {
          // The worst one to lose: the node that is also the active controller, so a new
          // controller is elected before anything can fence the dead broker and move its leaders.
          await at(durationS * 350 - 5_000);
          victim = await kafka.quorumLeader();
          await at(durationS * 350);
          await kafka.kill(victim);
          ctx.log(`  broker ${victim + 1} (the active controller) SIGKILLed`);
          await at(durationS * 700);
          await kafka.restart(victim);
          ctx.log(`  broker ${victim + 1} back`);
        },
      );
      const d = result.decisions;
      return outcome(`${rate} tx/s × ${durationS} s, 3 brokers, the active controller's killed`, result, [
        check(
          `no partition stall > ${STALL_TARGET_MS / 1000} s`,
          d.longestStallMs <= STALL_TARGET_MS,
          ms(d.longestStallMs),
        ),
        check("duplicates counted (at-least-once)", true, String(d.duplicates)),
      ]);
    } finally {
      await kafka.stop();
    }
  },
};

/** The private broker advertises the proxy's port, so every client's traffic takes the slow link. */
const slowKafka = (delayMs: number) =>
  slowDependency("Kafka", delayMs, async (ctx) => {
    let listenPort = 0;
    const proxy = await startDelayProxy({ targetPort: () => listenPort, delayMs });
    const kafka = await startPrivateKafka({
      root: ctx.root,
      dir: kafkaDir(),
      advertisedPorts: [proxy.port],
    }).catch(async (e: unknown) => {
      await proxy.close();
      throw e;
    });
    listenPort = kafka.listenPorts[0]!;
    return {
      endpoints: { kafkaBrokers: kafka.brokers, suiteBrokers: kafka.internalBrokers },
      async close() {
        await kafka.stop();
        await proxy.close();
      },
    };
  });

export const slowKafka50Scenario = slowKafka(50);
export const slowKafka500Scenario = slowKafka(500);
