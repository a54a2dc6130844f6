import { describe, expect, it } from "vitest";
import { parseControlChannelOptions } from "../../../src/cli/controlChannelOptions.js";

describe("control channel options", () => {
  it("takes brokers and topic from the environment, flags winning over it", () => {
    const env = { KAFKA_BROKERS: "a:1,b:2", KAFKA_CONTROL_TOPIC: "ctl" };
    expect(parseControlChannelOptions({}, env)).toEqual({
      ok: true,
      options: { kafkaBrokers: ["a:1", "b:2"], controlTopic: "ctl" },
    });
    expect(parseControlChannelOptions({ kafkaBrokers: "c:3", controlTopic: "mine" }, env)).toEqual({
      ok: true,
      options: { kafkaBrokers: ["c:3"], controlTopic: "mine" },
    });
  });

  it("defaults the topic to the scorer's and refuses a run without brokers", () => {
    expect(parseControlChannelOptions({ kafkaBrokers: "a:1" }, {})).toMatchObject({
      options: { controlTopic: "fraud-scorer.control" },
    });
    expect(parseControlChannelOptions({}, {})).toEqual({
      ok: false,
      problems: ["no brokers: give --kafka-brokers or set KAFKA_BROKERS"],
    });
  });
});
