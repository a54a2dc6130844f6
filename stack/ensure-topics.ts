// `tsx stack/ensure-topics.ts HOST:PORT[,HOST:PORT]` — stack.sh's way to create the topics.
import { ensureTopics, STACK_TOPICS } from "./topics.js";

const brokers = (process.argv[2] ?? "").split(",").filter((b) => b.length > 0);
if (brokers.length === 0) {
  console.error("usage: ensure-topics.ts HOST:PORT[,HOST:PORT...]");
  process.exit(2);
}

try {
  const { created } = await ensureTopics({ brokers });
  const counts = STACK_TOPICS.map(({ topic, numPartitions }) => `${topic}(${numPartitions})`).join(" ");
  console.log(`topics: ${counts}${created.length > 0 ? `; created ${created.join(", ")}` : ""}`);
} catch (error) {
  console.error(`could not ensure topics on ${brokers.join(",")}: ${(error as Error).message}`);
  process.exit(1);
}
