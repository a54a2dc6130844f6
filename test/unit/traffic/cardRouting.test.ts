// The generator picks each record's partition itself; it must be the partition Kafka's default
// partitioner gives the card id, or a card's transactions would be scored by two owners (the hash
// itself: test/unit/stream/keyPartition.test.ts).
import { describe, expect, it } from "vitest";
import { partitionForKey } from "../../../src/stream/keyPartition.js";
import { CardRouter } from "../../../src/tools/traffic/cardRouting.js";

describe("card routing", () => {
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
