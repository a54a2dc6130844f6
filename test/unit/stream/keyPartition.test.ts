// Decisions and generated transactions land on the partition any other Kafka client would pick
// for their key: Java's default partitioner, which @platformatic/kafka's compatibilityPartitioner
// reproduces (in BigInt arithmetic; ours is 32-bit, and must agree with it bit for bit).
import { compatibilityPartitioner, murmur2 as clientMurmur2 } from "@platformatic/kafka";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { murmur2, partitionForKey, positiveMurmur2 } from "../../../src/stream/keyPartition.js";
import { keyPartitioner } from "../../../src/stream/kafka/keyPartitioner.js";

describe("key partitioning", () => {
  it("hashes keys exactly as Kafka's murmur2 does (vectors from Kafka's own UtilsTest)", () => {
    const cases: Array<[string, number]> = [
      ["21", -973932308],
      ["foobar", -790332482],
      ["a-little-bit-long-string", -985981536],
      ["a-little-bit-longer-string", -1486304829],
      ["lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971],
      ["abc", 479470107],
    ];
    for (const [key, hash] of cases) expect(murmur2(Buffer.from(key))).toBe(hash);
  });

  it("agrees with the Kafka client's own murmur2 and partitioner on any key", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
        const key = Buffer.from(bytes);
        expect(murmur2(key)).toBe(clientMurmur2(key));
        expect(keyPartitioner({ topic: "t" }, key)).toBe(compatibilityPartitioner({ topic: "t" }, key));
      }),
      { numRuns: 2_000 },
    );
  });

  it("makes the hash positive with a mask, and sends a keyless record to partition 0", () => {
    expect(positiveMurmur2(Buffer.from("foobar"))).toBe(-790332482 & 0x7fffffff);
    expect(keyPartitioner({ topic: "t" }, undefined)).toBe(0);
  });

  it("puts a key in partition (murmur2 & 0x7fffffff) % partitions", () => {
    expect(partitionForKey(Buffer.from("foobar"), 12)).toBe((-790332482 & 0x7fffffff) % 12);
    expect(partitionForKey(Buffer.from("abc"), 7)).toBe(479470107 % 7);
  });
});
