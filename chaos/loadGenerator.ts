// Open-loop load from the product's own command line: `fraud-scorer produce` as a child process,
// each record timestamped with its scheduled send time (so a stalled scorer cannot hide latency).
import { spawn } from "node:child_process";
import { once } from "node:events";

export interface LoadOptions {
  readonly root: string;
  readonly brokers: string;
  readonly topic: string;
  readonly ratePerSecond: number;
  readonly durationS: number;
  readonly idPrefix: string;
  readonly seed?: number;
  readonly cards?: number;
}

export interface RunningLoad {
  /** Resolves when the generator exits: undefined when it sent everything, else why it did not. */
  readonly done: Promise<string | undefined>;
  readonly startedAtMs: number;
  /**
   * The generator's own closing line once it has exited (what it sent, how far behind schedule,
   * its CPU): a scorer's arrival leg includes the generator's lag, so a late spike is told apart.
   */
  readonly summary: () => string | undefined;
}

export function startLoad(o: LoadOptions): RunningLoad {
  const child = spawn(
    process.execPath,
    [
      "bin/fraud-scorer.js",
      "produce",
      "--topic",
      o.topic,
      "--kafka-brokers",
      o.brokers,
      "--rate",
      String(o.ratePerSecond),
      "--duration",
      `${o.durationS}s`,
      "--id-prefix",
      o.idPrefix,
      "--seed",
      String(o.seed ?? 42),
      ...(o.cards !== undefined ? ["--cards", String(o.cards)] : []),
      "--no-progress",
    ],
    { cwd: o.root, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const done = once(child, "exit").then(([code]) =>
    code === 0
      ? undefined
      : `fraud-scorer produce exited with ${String(code)}: ${output.trim().split("\n").at(-1) ?? ""}`,
  );
  const summary = () =>
    output
      .split("\n")
      .find((line) => line.startsWith("sent "))
      ?.trim();
  return { done, startedAtMs: Date.now(), summary };
}
