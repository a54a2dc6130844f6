// `tsx stack/probe-kafka.ts HOST:PORT[,HOST:PORT]` — exits 0 when a Kafka broker answers a
// metadata request there: stack.sh's test that a taken port is a broker it may use as it is.
import { createKafkaPort } from "../src/stream/kafka/index.js";

const brokers = (process.argv[2] ?? "").split(",").filter((b) => b.length > 0);
if (brokers.length === 0) {
  console.error("usage: probe-kafka.ts HOST:PORT[,HOST:PORT...]");
  process.exit(2);
}

const admin = createKafkaPort({ clientId: "fraud-scorer-stack-probe", brokers }).admin();
const timeout = setTimeout(() => {
  console.error(`no Kafka broker answers on ${brokers.join(",")} within 8 s`);
  process.exit(1);
}, 8_000);
try {
  const topics = await admin.listTopics();
  console.log(`kafka answers on ${brokers.join(",")}: ${topics.length} topic(s)`);
} catch (error) {
  console.error(`no Kafka broker answers on ${brokers.join(",")}: ${(error as Error).message}`);
  process.exitCode = 1;
} finally {
  clearTimeout(timeout);
  await admin.close().catch(() => {});
}
