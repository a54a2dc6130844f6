// The sinks' partitioner: Java's key partitioning (src/stream/keyPartition.ts), what the client's
// own compatibilityPartitioner computes (pinned by test/unit/stream/keyPartition.test.ts), in
// 32-bit arithmetic instead of its BigInt. A record without a key goes to partition 0, as there.
// It reads the key only, so it takes no partitioner context (a client Partitioner all the same).
import { positiveMurmur2 } from "../keyPartition.js";

export const keyPartitioner = (_message: unknown, key: Uint8Array | undefined): number =>
  key instanceof Uint8Array ? positiveMurmur2(key) : 0;
