import { describe, expect, it } from "vitest";
import { CoalescingSend } from "../../src/stream/kafka/coalescingSend.js";

/** A send whose requests the test acknowledges (or fails) one by one. */
function controlledSend() {
  const requests: { messages: number[]; settle: (err?: Error) => void }[] = [];
  const send = (messages: number[]) =>
    new Promise<void>((resolve, reject) => {
      requests.push({ messages, settle: (err) => (err ? reject(err) : resolve()) });
    });
  return { requests, send };
}

const tick = () => new Promise((r) => setImmediate(r));

describe("publishes made while a request is in flight leave together", () => {
  it("sends the first publish at once and merges the ones behind it, in order", async () => {
    const { requests, send } = controlledSend();
    const sink = new CoalescingSend({ send });
    const acked: string[] = [];
    const a = sink.publish([1, 2]).then(() => acked.push("a"));
    const b = sink.publish([3]).then(() => acked.push("b"));
    const c = sink.publish([4, 5]).then(() => acked.push("c"));
    await tick();
    expect(requests.map((r) => r.messages)).toEqual([[1, 2]]);
    requests[0]!.settle();
    await a;
    expect(acked).toEqual(["a"]);
    await tick();
    expect(requests.map((r) => r.messages)).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
    requests[1]!.settle();
    await Promise.all([b, c]);
    expect(acked).toEqual(["a", "b", "c"]);
  });

  it("fails exactly the publishes of the failed request, and goes on with the next", async () => {
    const { requests, send } = controlledSend();
    const sink = new CoalescingSend({ send });
    const first = sink.publish([1]);
    const second = sink.publish([2]);
    const third = sink.publish([3]);
    await tick();
    requests[0]!.settle();
    await first;
    await tick();
    requests[1]!.settle(new Error("broker away"));
    await expect(second).rejects.toThrow("broker away");
    await expect(third).rejects.toThrow("broker away");
    const fourth = sink.publish([4]);
    await tick();
    expect(requests.at(-1)!.messages).toEqual([4]);
    requests.at(-1)!.settle();
    await expect(fourth).resolves.toBeUndefined();
  });

  it("caps a request at maxMessages, splitting a publish where it must", async () => {
    const { requests, send } = controlledSend();
    const sink = new CoalescingSend({ send, maxMessages: 3 });
    const all = [sink.publish([0]), sink.publish([1, 2]), sink.publish([3, 4]), sink.publish([5, 6, 7, 8])];
    for (let i = 0; i < 4; i++) {
      await tick();
      requests[i]!.settle();
    }
    await Promise.all(all);
    expect(requests.map((r) => r.messages)).toEqual([[0], [1, 2, 3], [4, 5, 6], [7, 8]]);
  });
});

describe("a merged request stays under its byte bound", () => {
  it("leaves a publish over the bound alone and merges small ones up to it", async () => {
    const { requests, send } = controlledSend();
    const sink = new CoalescingSend({ send, maxBytes: 1_000, sizeOf: (m: number) => m });
    const all = [
      sink.publish([10]),
      sink.publish([900]),
      sink.publish([200]),
      sink.publish([1_500]),
      sink.publish([50, 50]),
    ];
    for (let i = 0; i < 5; i++) {
      await tick();
      requests[i]!.settle();
    }
    await Promise.all(all);
    expect(requests.map((r) => r.messages)).toEqual([[10], [900], [200], [1_500], [50, 50]]);
  });

  it("merges what fits", async () => {
    const { requests, send } = controlledSend();
    const sink = new CoalescingSend({ send, maxBytes: 1_000, sizeOf: (m: number) => m });
    const all = [
      sink.publish([10]),
      sink.publish([300]),
      sink.publish([300]),
      sink.publish([300]),
      sink.publish([300]),
    ];
    for (let i = 0; i < 3; i++) {
      await tick();
      requests[i]!.settle();
    }
    await Promise.all(all);
    expect(requests.map((r) => r.messages)).toEqual([[10], [300, 300, 300], [300]]);
  });
});

describe("a publish larger than a request", () => {
  it("is split over requests and acknowledged when the last part is", async () => {
    const { requests, send } = controlledSend();
    const sink = new CoalescingSend({ send, maxBytes: 1_000, sizeOf: (m: number) => m });
    let acked = false;
    const big = sink.publish([600, 601, 602]).then(() => (acked = true));
    for (let i = 0; i < 2; i++) {
      await tick();
      requests[i]!.settle();
    }
    await tick();
    expect(acked).toBe(false);
    requests[2]!.settle();
    await big;
    expect(requests.map((r) => r.messages)).toEqual([[600], [601], [602]]);
  });

  it("is refused whole when a part is, its other parts never sent", async () => {
    const { requests, send } = controlledSend();
    const sink = new CoalescingSend({ send, maxBytes: 1_000, sizeOf: (m: number) => m });
    const big = sink.publish([600, 601]);
    const small = sink.publish([10]);
    await tick();
    requests[0]!.settle(new Error("MESSAGE_TOO_LARGE"));
    await expect(big).rejects.toThrow("MESSAGE_TOO_LARGE");
    await tick();
    requests[1]!.settle();
    await small;
    expect(requests.map((r) => r.messages)).toEqual([[600], [10]]);
  });
});

/** A send per lane whose requests the test settles; records which lane each went on. */
function controlledLanes() {
  const requests: { messages: string[]; lane: number; settle: (err?: Error) => void }[] = [];
  const send = (messages: string[], lane: number) =>
    new Promise<void>((resolve, reject) => {
      requests.push({ messages, lane, settle: (err) => (err ? reject(err) : resolve()) });
    });
  return { requests, send };
}

describe("several lanes: requests in flight at once, order kept per key", () => {
  const keyOf = (m: string) => m.split(":")[0]!;

  it("sends a publish on an idle lane while another lane's request is out", async () => {
    const { requests, send } = controlledLanes();
    const sink = new CoalescingSend({ send, lanes: 3, orderKeyOf: keyOf });
    const a = sink.publish(["a:1"]);
    const b = sink.publish(["b:1", "c:1"]);
    await tick();
    expect(requests.map((r) => [r.lane, r.messages])).toEqual([
      [0, ["a:1"]],
      [1, ["b:1", "c:1"]],
    ]);
    requests[1]!.settle();
    await b;
    requests[0]!.settle();
    await a;
  });

  it("holds a key's later messages until its earlier ones are acknowledged, and lets other keys pass", async () => {
    const { requests, send } = controlledLanes();
    const sink = new CoalescingSend({ send, lanes: 3, orderKeyOf: keyOf });
    const first = sink.publish(["a:1"]);
    const second = sink.publish(["a:2", "b:1", "a:3", "c:1"]);
    await tick();
    expect(requests.map((r) => r.messages)).toEqual([["a:1"], ["b:1", "c:1"]]);
    requests[0]!.settle();
    await first;
    await tick();
    expect(requests.map((r) => r.messages)).toEqual([["a:1"], ["b:1", "c:1"], ["a:2", "a:3"]]);
    requests[1]!.settle();
    requests[2]!.settle();
    await second;
  });

  it("uses one lane at a time when every message shares a key (no orderKeyOf)", async () => {
    const { requests, send } = controlledLanes();
    const sink = new CoalescingSend({ send, lanes: 5 });
    const all = [sink.publish(["x"]), sink.publish(["y"]), sink.publish(["z"])];
    await tick();
    expect(requests.map((r) => r.messages)).toEqual([["x"]]);
    requests[0]!.settle();
    await tick();
    expect(requests.map((r) => r.messages)).toEqual([["x"], ["y", "z"]]);
    requests[1]!.settle();
    await Promise.all(all);
  });

  it("refuses a publish whole when its part on one lane fails, while its part on another is out", async () => {
    const { requests, send } = controlledLanes();
    const sink = new CoalescingSend({ send, lanes: 2, orderKeyOf: keyOf });
    const blocker = sink.publish(["a:1"]);
    const split = sink.publish(["a:2", "b:1"]);
    const refused = expect(split).rejects.toThrow("broker away");
    await tick();
    expect(requests.map((r) => r.messages)).toEqual([["a:1"], ["b:1"]]);
    requests[1]!.settle(new Error("broker away"));
    await tick();
    requests[0]!.settle();
    await blocker;
    await refused;
    await tick();
    // a:2 belonged to the refused publish: never sent.
    expect(requests.map((r) => r.messages)).toEqual([["a:1"], ["b:1"]]);
  });
});

describe("a backlog longer than one request looks at", () => {
  it("delivers every message once, each key in order, when most of it is keys in flight", async () => {
    const { requests, send } = controlledLanes();
    const keyOf = (m: string) => m.split(":")[0]!;
    const sink = new CoalescingSend({ send, lanes: 3, orderKeyOf: keyOf, maxMessages: 500 });
    // 60k messages over 7 keys, published while requests are out: far more than a request scans.
    const publishes: Promise<void>[] = [];
    for (let p = 0; p < 120; p++)
      publishes.push(
        sink.publish(Array.from({ length: 500 }, (_, i) => `k${(p * 500 + i) % 7}:${p * 500 + i}`)),
      );
    const delivered: string[] = [];
    let settled = 0;
    // Acknowledge the latest request first, then the earlier ones: lanes finish out of order.
    while (settled < requests.length || delivered.length < 60_000) {
      await tick();
      const open = requests.slice(settled);
      if (open.length === 0) break;
      for (const r of open.reverse()) {
        delivered.push(...r.messages);
        r.settle();
      }
      settled = requests.length;
    }
    expect(delivered).toHaveLength(60_000);
    expect(new Set(delivered).size).toBe(60_000);
    for (let k = 0; k < 7; k++) {
      const sequence = delivered.filter((m) => keyOf(m) === `k${k}`).map((m) => Number(m.split(":")[1]));
      expect(sequence).toEqual([...sequence].sort((a, b) => a - b));
    }
    await Promise.all(publishes);
  });

  it("takes a long backlog in small requests in exact publish order, on one lane", async () => {
    // Requests of 50 from a 20k backlog: the queue's spent front is dropped many times over.
    const { requests, send } = controlledSend();
    const sink = new CoalescingSend({ send, maxMessages: 50 });
    const publishes = [sink.publish([-1])];
    for (let p = 0; p < 40; p++)
      publishes.push(sink.publish(Array.from({ length: 500 }, (_, i) => p * 500 + i)));
    const delivered: number[] = [];
    for (let r = 0; r < requests.length; r++) {
      delivered.push(...requests[r]!.messages);
      requests[r]!.settle();
      await tick();
    }
    expect(requests.length).toBe(1 + 20_000 / 50);
    expect(delivered).toEqual([-1, ...Array.from({ length: 20_000 }, (_, i) => i)]);
    await Promise.all(publishes);
  });
});
