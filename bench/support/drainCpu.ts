// Where a drain's CPU goes beyond the draining process's own total: its main thread against its
// other threads (V8's helpers: parallel scavenging, concurrent marking and sweeping, optimizing
// compilation; libuv's pool), and what Redis and the broker, on the same two cores, spent beside
// it. Linux's /proc gives the threads and the broker; Redis its INFO. A figure this machine cannot
// give is left out (no /proc, a broker not started by the stack scripts).
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Redis } from "ioredis";

/** Clock ticks per second of /proc's CPU times. */
const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime of one /proc stat line, ticks (fields 14 and 15, after the parenthesised name). */
function statTicks(line: string): number {
  const fields = line.slice(line.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

const readTicks = (path: string): number | undefined => {
  try {
    return statTicks(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
};

/** A process's CPU so far, µs: its main thread's and all its threads'. */
export interface ThreadCpu {
  readonly mainUs: number;
  readonly allUs: number;
}

export function threadCpu(pid: number | undefined): ThreadCpu | undefined {
  if (pid === undefined) return undefined;
  const main = readTicks(`/proc/${pid}/task/${pid}/stat`);
  const all = readTicks(`/proc/${pid}/stat`);
  if (main === undefined || all === undefined) return undefined;
  return { mainUs: (1e6 * main) / TICKS_PER_SECOND, allUs: (1e6 * all) / TICKS_PER_SECOND };
}

/** The stack's broker (stack/stack.sh writes its pid), if it runs here. */
export function brokerPid(root: string): number | undefined {
  const file = join(root, ".stack", "kafka.pid");
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, "utf8").trim());
  return Number.isInteger(pid) && pid > 0 && existsSync(`/proc/${pid}`) ? pid : undefined;
}

/** A process's CPU so far, µs (every thread), or undefined. */
export const processCpuUs = (pid: number | undefined): number | undefined => threadCpu(pid)?.allUs;

/**
 * The Redis server's CPU time so far, µs (INFO cpu: user + system, all its threads). It runs on the
 * same two cores as the scorer, and the scripts each batch runs cost it about as much CPU as the
 * scorer spends on a transaction in all, so a rate the scorer alone could hold may not fit beside
 * it. The bench's Redis serves nothing else while a section runs.
 */
export async function redisCpuUs(redis: Redis): Promise<number> {
  const info = await redis.info("cpu");
  const seconds = (field: string) => Number(new RegExp(`^${field}:([0-9.]+)`, "m").exec(info)?.[1] ?? NaN);
  return (seconds("used_cpu_user") + seconds("used_cpu_sys")) * 1e6;
}

/** Readings at the start of a drain, compared at its end by drainCpuSplit. */
export interface DrainCpuMark {
  readonly process?: ThreadCpu;
  readonly brokerUs?: number;
  readonly redisUs?: number;
}

export async function markDrainCpu(
  pid: number | undefined,
  broker: number | undefined,
  redis: Redis | undefined,
): Promise<DrainCpuMark> {
  const process = threadCpu(pid);
  const brokerUs = processCpuUs(broker);
  const redisUs = redis === undefined ? undefined : await redisCpuUs(redis);
  return {
    ...(process ? { process } : {}),
    ...(brokerUs === undefined ? {} : { brokerUs }),
    ...(redisUs === undefined ? {} : { redisUs }),
  };
}

/** µs per record over a drain; each absent where either reading is. */
export interface DrainCpuSplit {
  /** The draining process's main thread. */
  readonly mainThreadUsPerRecord?: number;
  /** Its other threads. */
  readonly otherThreadsUsPerRecord?: number;
  readonly brokerUsPerRecord?: number;
  readonly redisUsPerRecord?: number;
}

const perRecord = (us: number, records: number) => Math.round((10 * us) / records) / 10;

export function drainCpuSplit(start: DrainCpuMark, end: DrainCpuMark, records: number): DrainCpuSplit {
  const split: { -readonly [K in keyof DrainCpuSplit]: number } = {};
  if (start.process && end.process) {
    const main = end.process.mainUs - start.process.mainUs;
    split.mainThreadUsPerRecord = perRecord(main, records);
    split.otherThreadsUsPerRecord = perRecord(end.process.allUs - start.process.allUs - main, records);
  }
  if (start.brokerUs !== undefined && end.brokerUs !== undefined)
    split.brokerUsPerRecord = perRecord(end.brokerUs - start.brokerUs, records);
  if (start.redisUs !== undefined && end.redisUs !== undefined)
    split.redisUsPerRecord = perRecord(end.redisUs - start.redisUs, records);
  return split;
}
