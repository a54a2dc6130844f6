// Where a drain's CPU goes beyond the draining process's own total: its main thread against its
// other threads (V8's helpers: parallel scavenging, concurrent marking and sweeping, optimizing
// compilation; libuv's pool), and what Redis and the broker, on the same two cores, spent beside
// it. Linux's /proc gives the threads, the broker and a Redis on this machine; a Redis elsewhere
// its INFO. A figure this machine cannot give is left out (no /proc, a broker elsewhere).
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, readlinkSync } from "node:fs";
import type { Redis } from "ioredis";
import { meanOfEvery, round1 } from "./alternatingRounds.js";

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

/**
 * A process's CPU so far, µs: its main thread's and all its threads'. Also, from the scheduler's
 * own accounting (/proc/<pid>/task/<pid>/schedstat, where the kernel keeps it), the main thread's
 * time on a core and its time runnable but waiting for one, ns: a drain whose main thread is
 * seldom idle is paced by that thread, however much of the two cores is left on average.
 */
export interface ThreadCpu {
  readonly mainUs: number;
  readonly allUs: number;
  readonly mainOnCoreNs?: number;
  readonly mainWaitingNs?: number;
}

export function threadCpu(pid: number | undefined): ThreadCpu | undefined {
  if (pid === undefined) return undefined;
  const main = readTicks(`/proc/${pid}/task/${pid}/stat`);
  const all = readTicks(`/proc/${pid}/stat`);
  if (main === undefined || all === undefined) return undefined;
  const cpu = { mainUs: (1e6 * main) / TICKS_PER_SECOND, allUs: (1e6 * all) / TICKS_PER_SECOND };
  const sched = readSchedstat(`/proc/${pid}/task/${pid}/schedstat`);
  return sched === undefined ? cpu : { ...cpu, mainOnCoreNs: sched[0], mainWaitingNs: sched[1] };
}

/** schedstat: ns on a core, ns runnable on a run queue, time slices. */
function readSchedstat(path: string): readonly [number, number] | undefined {
  try {
    const [onCore, waiting] = readFileSync(path, "utf8").trim().split(" ").map(Number);
    return Number.isFinite(onCore) && Number.isFinite(waiting) ? [onCore!, waiting!] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The process listening on the first broker's port, when that broker is on this machine (the
 * stack's JVM, wherever it was started from): /proc/net/tcp{,6} names the listening socket's
 * inode, and the process holding it has a descriptor linked to it. Found once per port.
 */
export function brokerPid(kafkaBrokers: string): number | undefined {
  return localListenerPid(kafkaBrokers.split(",")[0]?.trim() ?? "");
}

/** The process listening on `host:port`, when that is this machine; found once per port. */
function localListenerPid(hostPort: string): number | undefined {
  const match = /^(127\.0\.0\.1|localhost|\[::1\]):(\d+)$/.exec(hostPort);
  if (match === null) return undefined;
  const port = Number(match[2]);
  if (!listeners.has(port)) listeners.set(port, listeningPid(port));
  const pid = listeners.get(port);
  return pid !== undefined && existsSync(`/proc/${pid}`) ? pid : undefined;
}

const listeners = new Map<number, number | undefined>();

function listeningPid(port: number): number | undefined {
  const inodes = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is hex ip:port; state 0A is LISTEN; the inode is the tenth field.
      if (f.length > 9 && f[3] === "0A" && parseInt(f[1]!.split(":")[1]!, 16) === port) inodes.add(f[9]!);
    }
  }
  if (inodes.size === 0) return undefined;
  for (const entry of safeReaddir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    for (const fd of safeReaddir(`/proc/${entry}/fd`)) {
      let link: string;
      try {
        link = readlinkSync(`/proc/${entry}/fd/${fd}`);
      } catch {
        continue;
      }
      const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
      if (inode !== undefined && inodes.has(inode)) return Number(entry);
    }
  }
  return undefined;
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The Redis whose CPU is read (redisCpuUs): its URL, and a client for INFO should it be elsewhere. */
export interface RedisCpuSource {
  readonly url: string;
  readonly client: () => Redis;
}

/**
 * The Redis server's CPU time so far, µs (user + system, all its threads). It runs on the same two
 * cores as the scorer, and the scripts each batch runs cost it about as much CPU as the scorer
 * spends on a transaction in all, so a rate the scorer alone could hold may not fit beside it. The
 * bench's Redis serves nothing else while a section runs.
 *
 * Read from /proc when the server is on this machine, not with INFO: in the in-process sections the
 * command goes through the ioredis code the scorer under test runs, and its reply, of another shape
 * than the scripts', deoptimized that code at the start of the measured window (V8's --trace-deopt
 * in bench section 8's steady run, 2026-12-07: ioredis's sendCommand, transformReply and a dozen
 * more), which was then compiled again inside it. INFO, through `client`, for a server elsewhere.
 */
export async function redisCpuUs({ url, client }: RedisCpuSource): Promise<number> {
  const { hostname, port } = new URL(url);
  const pid = localListenerPid(`${hostname}:${port || "6379"}`);
  const server = threadCpu(pid);
  if (server !== undefined) return server.allUs;
  const info = await client().info("cpu");
  const seconds = (field: string) => Number(new RegExp(`^${field}:([0-9.]+)`, "m").exec(info)?.[1] ?? NaN);
  return (seconds("used_cpu_user") + seconds("used_cpu_sys")) * 1e6;
}

/** This process's CPU time so far, µs (process.cpuUsage: user + system, every thread). */
export function processCpuUs(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** Readings at the start of a drain, compared at its end by drainCpuSplit. */
export interface DrainCpuMark {
  /** performance.now() when read. */
  readonly atMs?: number;
  readonly process?: ThreadCpu;
  readonly brokerUs?: number;
  readonly redisUs?: number;
}

export async function markDrainCpu(
  pid: number | undefined,
  broker: number | undefined,
  redis: RedisCpuSource | undefined,
): Promise<DrainCpuMark> {
  // The time of the thread readings, not of Redis's answer after them.
  const atMs = performance.now();
  const own = threadCpu(pid);
  const brokerUs = threadCpu(broker)?.allUs;
  const redisUs = redis === undefined ? undefined : await redisCpuUs(redis);
  return {
    atMs,
    ...(own ? { process: own } : {}),
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
  /**
   * The main thread's shares of the wall time between the readings, %: on a core, and runnable
   * but waiting for one (the rest it was idle, waiting for I/O or a timer).
   */
  readonly mainThreadOnCorePercent?: number;
  readonly mainThreadWaitingPercent?: number;
}

type MutableSplit = { -readonly [K in keyof DrainCpuSplit]: number };
const perRecord = (us: number, records: number) => round1(us / records);

export function drainCpuSplit(start: DrainCpuMark, end: DrainCpuMark, records: number): DrainCpuSplit {
  const split: MutableSplit = {};
  if (start.process && end.process) {
    const main = end.process.mainUs - start.process.mainUs;
    split.mainThreadUsPerRecord = perRecord(main, records);
    split.otherThreadsUsPerRecord = perRecord(end.process.allUs - start.process.allUs - main, records);
    const wallNs = 1e6 * ((end.atMs ?? NaN) - (start.atMs ?? NaN));
    const { mainOnCoreNs: onCore0, mainWaitingNs: waiting0 } = start.process;
    const { mainOnCoreNs: onCore1, mainWaitingNs: waiting1 } = end.process;
    if (
      wallNs > 0 &&
      onCore0 !== undefined &&
      onCore1 !== undefined &&
      waiting0 !== undefined &&
      waiting1 !== undefined
    ) {
      split.mainThreadOnCorePercent = round1((100 * (onCore1 - onCore0)) / wallNs);
      split.mainThreadWaitingPercent = round1((100 * (waiting1 - waiting0)) / wallNs);
    }
  }
  if (start.brokerUs !== undefined && end.brokerUs !== undefined)
    split.brokerUsPerRecord = perRecord(end.brokerUs - start.brokerUs, records);
  if (start.redisUs !== undefined && end.redisUs !== undefined)
    split.redisUsPerRecord = perRecord(end.redisUs - start.redisUs, records);
  return split;
}

/** The mean of several drains' splits, each figure only where every drain has it. */
export function meanCpuSplit(splits: readonly (DrainCpuSplit | undefined)[]): DrainCpuSplit | undefined {
  const mean: MutableSplit = {};
  for (const key of Object.keys(splits[0] ?? {}) as (keyof DrainCpuSplit)[]) {
    const value = meanOfEvery(splits.map((s) => s?.[key]));
    if (value !== undefined) mean[key] = value;
  }
  return Object.keys(mean).length > 0 ? mean : undefined;
}
