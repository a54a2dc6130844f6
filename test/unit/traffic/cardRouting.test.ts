// The generator picks each record's partition itself; it must be the partition Kafka's default
// partitioner gives the card id, or a card's transactions would be scored by two owners.
import { describe, expect, it } from "vitest";
import { CardRouter, murmur2, partitionForKey } from "../../../src/tools/traffic/cardRouting.js";

describe("card routing", () => {
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

  it("puts a key in partition (murmur2 & 0x7fffffff) % partitions", () => {
    expect(partitionForKey(Buffer.from("foobar"), 12)).toBe((-790332482 & 0x7fffffff) % 12);
    expect(partitionForKey(Buffer.from("abc"), 7)).toBe(479470107 % 7);
  });

  it("routes a card to the same partition and key every time", () => {
    const router = new CardRouter(12);
    const first = router.route("card-000042");
    expect(router.route("card-000042")).toBe(first);
    expect(first.key.toString("utf8")).toBe("card-000042");
    expect(first.partition).toBe(partitionForKey(Buffer.from("card-000042"), 12));
  });

  it("refuses a topic without partitions", () => {
    expect(() => new CardRouter(0)).toThrow(/at least one partition/);
  });
});
