// The restart-stall probe, run as its own process by the Kafka clients section: joins a group
// through the port (static membership when an instance id is given), never commits, and prints
// one JSON line when it has started, joined, and received its first batch (ms since the epoch).
//   node --import tsx bench/sections/kafkaRestartProbe.ts BROKERS TOPIC GROUP INSTANCE_ID|-
import { createKafkaPort } from "../../src/stream/kafka/index.js";

const [brokers, topic, groupId, instance] = process.argv.slice(2);
const say = (event: string) => process.stdout.write(`${JSON.stringify({ event, atMs: Date.now() })}\n`);
say("started");
const source = createKafkaPort({ brokers: brokers!.split(","), clientId: "bench-restart-probe" }).groupSource(
  {
    topics: [topic!],
    groupId: groupId!,
    groupInstanceId: instance === "-" ? undefined : instance,
    sessionTimeoutMs: 10_000,
    onEvent: (e) => {
      if (e.type === "joined" && e.assigned.length > 0) say("joined");
    },
  },
);
let first = true;
await source.start(() => {
  if (first) say("batch");
  first = false;
});
setInterval(() => {}, 60_000);
