// The sinks' partitioner: Java's key partitioning (src/stream/keyPartition.ts), what the client's
// own compatibilityPartitioner computes (pinned by test/unit/stream/keyPartition.test.ts), in
// 32-bit arithmetic instead of its BigInt. A record without a key goes to partition 0, as there.
import type { Partitioner } from "@platformatic/kafka";
import { positiveMurmur2 } from "../keyPartition.js";

export const keyPartitioner: Partitioner<Buffer, Buffer, Buffer, Buffer> = (_message, key) =>
  key instanceof Uint8Array ? positiveMurmur2(key) : 0;
