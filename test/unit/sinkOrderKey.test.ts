import { describe, expect, it } from "vitest";
import { orderKeyOf } from "../../src/stream/kafka/platformaticSink.js";

describe("the order a sink keeps between its producers", () => {
  it("orders records by key when the partitioner places them", () => {
    const a = orderKeyOf({ topic: "t", key: "card-1", value: null });
    expect(orderKeyOf({ topic: "t", key: Buffer.from("card-1"), value: null })).toBe(a);
    expect(orderKeyOf({ topic: "t", key: "card-2", value: null })).not.toBe(a);
    expect(orderKeyOf({ topic: "u", key: "card-1", value: null })).not.toBe(a);
  });

  it("orders records sent to a chosen partition by that partition, whatever their keys", () => {
    const p3 = orderKeyOf({ topic: "t", key: "card-1", value: null, partition: 3 });
    expect(orderKeyOf({ topic: "t", key: "card-2", value: null, partition: 3 })).toBe(p3);
    expect(orderKeyOf({ topic: "t", key: null, value: null, partition: 3 })).toBe(p3);
    expect(orderKeyOf({ topic: "t", key: "card-1", value: null, partition: 4 })).not.toBe(p3);
    expect(orderKeyOf({ topic: "u", key: "card-1", value: null, partition: 3 })).not.toBe(p3);
  });

  it("keeps keyless records of a topic in one order", () => {
    const keyless = orderKeyOf({ topic: "t", key: null, value: null });
    expect(orderKeyOf({ topic: "t", key: null, value: Buffer.from("x") })).toBe(keyless);
    expect(orderKeyOf({ topic: "t", key: "card-1", value: null })).not.toBe(keyless);
  });
});
