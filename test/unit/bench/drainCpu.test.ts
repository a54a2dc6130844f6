import { createServer } from "node:net";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { brokerPid, drainCpuSplit, meanCpuSplit, threadCpu } from "../../../bench/support/drainCpu.js";

describe("drainCpuSplit", () => {
  it("divides each difference by the records, the main thread's apart from the other threads'", () => {
    const split = drainCpuSplit(
      { process: { mainUs: 1_000_000, allUs: 1_500_000 }, brokerUs: 200_000, redisUs: 50_000 },
      { process: { mainUs: 7_600_000, allUs: 10_500_000 }, brokerUs: 1_220_000, redisUs: 1_730_000 },
      300_000,
    );
    expect(split).toEqual({
      mainThreadUsPerRecord: 22,
      otherThreadsUsPerRecord: 8,
      brokerUsPerRecord: 3.4,
      redisUsPerRecord: 5.6,
    });
  });

  it("gives the main thread's shares of the wall time between the readings on a core and waiting for one", () => {
    const split = drainCpuSplit(
      { atMs: 1_000, process: { mainUs: 0, allUs: 0, mainOnCoreNs: 5e8, mainWaitingNs: 1e8 } },
      // 10 s later: 8 s more on a core, 1.5 s more waiting.
      { atMs: 11_000, process: { mainUs: 8e6, allUs: 1e7, mainOnCoreNs: 8.5e9, mainWaitingNs: 1.6e9 } },
      100_000,
    );
    expect(split).toEqual({
      mainThreadUsPerRecord: 80,
      otherThreadsUsPerRecord: 20,
      mainThreadOnCorePercent: 80,
      mainThreadWaitingPercent: 15,
    });
  });

  it("leaves out a figure that either reading lacks", () => {
    const split = drainCpuSplit(
      { redisUs: 0 },
      { process: { mainUs: 1, allUs: 2 }, redisUs: 300_000 },
      100_000,
    );
    expect(split).toEqual({ redisUsPerRecord: 3 });
  });
});

describe("threadCpu", () => {
  it("reads this process's threads from /proc, the main thread's part of the whole", () => {
    const cpu = threadCpu(process.pid);
    if (process.platform !== "linux") return expect(cpu).toBeUndefined();
    expect(cpu).toBeDefined();
    expect(cpu!.mainUs).toBeGreaterThan(0);
    expect(cpu!.allUs).toBeGreaterThanOrEqual(cpu!.mainUs);
    // schedstat counts in ns what stat counts in clock ticks: the same time on a core, within a tick.
    expect(cpu!.mainOnCoreNs! / 1000).toBeGreaterThan(cpu!.mainUs - 20_000);
    expect(cpu!.mainWaitingNs).toBeGreaterThanOrEqual(0);
  });

  it("gives nothing for a process that is not there", () => {
    expect(threadCpu(undefined)).toBeUndefined();
    expect(threadCpu(2 ** 22 + 1)).toBeUndefined();
  });
});

describe("brokerPid", () => {
  it("finds the process listening on a local broker's port, and none for a remote broker", async () => {
    const server = createServer();
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const { port } = server.address() as { port: number };
      if (process.platform === "linux") expect(brokerPid(`127.0.0.1:${port},127.0.0.1:1`)).toBe(process.pid);
      expect(brokerPid(`10.1.2.3:${port}`)).toBeUndefined();
    } finally {
      server.close();
    }
  });
});

describe("meanCpuSplit", () => {
  it("averages each figure over the drains, and leaves out one that a drain lacks", () => {
    const mean = meanCpuSplit([
      { mainThreadUsPerRecord: 22, otherThreadsUsPerRecord: 8, redisUsPerRecord: 6 },
      { mainThreadUsPerRecord: 23, otherThreadsUsPerRecord: 7.5 },
    ]);
    expect(mean).toEqual({ mainThreadUsPerRecord: 22.5, otherThreadsUsPerRecord: 7.8 });
  });

  it("gives nothing when no drain was split", () => {
    expect(meanCpuSplit([undefined, undefined])).toBeUndefined();
  });
});
