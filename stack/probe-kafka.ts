// `tsx stack/probe-kafka.ts HOST:PORT[,HOST:PORT]` — exits 0 when a Kafka broker answers a
// metadata request there: stack.sh's test that a taken port is a broker it may use as it is.
import { Kafka, logLevel } from "kafkajs";

const brokers = (process.argv[2] ?? "").split(",").filter((b) => b.length > 0);
if (brokers.length === 0) {
  console.error("usage: probe-kafka.ts HOST:PORT[,HOST:PORT...]");
  process.exit(2);
}

const admin = new Kafka({
  clientId: "fraud-scorer-stack-probe",
  brokers,
  logLevel: logLevel.NOTHING,
  connectionTimeout: 3_000,
  requestTimeout: 5_000,
  retry: { retries: 1 },
}).admin();
try {
  await admin.connect();
  const { brokers: found, clusterId } = await admin.describeCluster();
  console.log(`kafka answers on ${brokers.join(",")}: cluster ${clusterId}, ${found.length} broker(s)`);
} catch (error) {
  console.error(`no Kafka broker answers on ${brokers.join(",")}: ${(error as Error).message}`);
  process.exitCode = 1;
} finally {
  await admin.disconnect();
}
