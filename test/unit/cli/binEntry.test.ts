// The bin runs the build in dist/ only when no source is newer than it, so a checkout being
// worked on never runs stale code, and a container (dist/ without src/) runs the build.
import { execFile, spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

let dir: string;
const at = (path: string, seconds: number) => utimesSync(join(dir, path), seconds, seconds);
const entryThatRuns = async () =>
  (await run(process.execPath, [join(dir, "bin/fraud-scorer.js")], { cwd: dir })).stdout.trim();

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "fraud-scorer-bin-"));
  mkdirSync(join(dir, "bin"));
  for (const file of ["fraud-scorer.js", "nodeFlags.js"])
    cpSync(join(ROOT, "bin", file), join(dir, "bin", file));
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
  mkdirSync(join(dir, "dist/cli"), { recursive: true });
  writeFileSync(join(dir, "dist/cli/main.js"), 'console.log("dist");\n');
  mkdirSync(join(dir, "src/cli"), { recursive: true });
  writeFileSync(join(dir, "src/cli/main.ts"), 'const from: string = "src";\nconsole.log(from);\n');
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("bin/fraud-scorer.js", () => {
  it("runs dist/ when it is newer than every source", async () => {
    at("src/cli/main.ts", 1_000_000);
    at("dist/cli/main.js", 2_000_000);
    expect(await entryThatRuns()).toBe("dist");
  });

  it("runs the TypeScript sources when one of them is newer than dist/", async () => {
    at("dist/cli/main.js", 1_000_000);
    at("src/cli/main.ts", 2_000_000);
    expect(await entryThatRuns()).toBe("src");
  });

  it("runs dist/ where there are no sources, as in the container", async () => {
    rmSync(join(dir, "src"), { recursive: true });
    expect(await entryThatRuns()).toBe("dist");
  });

  it("runs the sources where nothing was built", async () => {
    rmSync(join(dir, "dist"), { recursive: true });
    expect(await entryThatRuns()).toBe("src");
  });
});

describe("bin/fraud-scorer.js, Node's flags for the commands that score", () => {
  // What the command ran with, from inside it: its pid and Node's flags.
  const started = (args: string[], { env = {}, nodeArgs = [] as string[] } = {}) => {
    rmSync(join(dir, "src"), { recursive: true, force: true });
    writeFileSync(
      join(dir, "dist/cli/main.js"),
      "console.log(JSON.stringify({ pid: process.pid, execArgv: process.execArgv }));\n",
    );
    return new Promise<{ spawnedPid: number; pid: number; execArgv: string[] }>((resolve, reject) => {
      const child = spawn(process.execPath, [...nodeArgs, join(dir, "bin/fraud-scorer.js"), ...args], {
        cwd: dir,
        env: { ...process.env, NODE_OPTIONS: "", ...env },
      });
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
      child.on("error", reject);
      child.on("exit", (code) => {
        if (code !== 0) reject(new Error(`exited ${code}: ${out}`));
        else resolve({ spawnedPid: child.pid!, ...(JSON.parse(out) as { pid: number; execArgv: string[] }) });
      });
    });
  };

  const SCORING_FLAGS = [
    "--max-semi-space-size=64",
    "--single-threaded-gc",
    "--initial-old-space-size=512",
    "--v8-pool-size=1",
  ];

  it("starts serve again in the same process with a 64 MB young generation, the collector on one thread, a 512 MB old-generation floor and one V8 worker thread", async () => {
    const seen = await started(["serve", "--dev"]);
    expect(seen.execArgv).toEqual(SCORING_FLAGS);
    // execve, not a child: a supervisor's signals reach the scorer itself.
    expect(seen.pid).toBe(seen.spawnedPid);
  });

  it("does the same for replay and shadow, and for no other command", async () => {
    expect((await started(["replay"])).execArgv).toEqual(SCORING_FLAGS);
    expect((await started(["shadow"])).execArgv).toEqual(SCORING_FLAGS);
    expect((await started(["decisions", "--follow"])).execArgv).toEqual([]);
    expect((await started(["--help"])).execArgv).toEqual([]);
  });

  // Of each kind given on Node's command line, none added: the others still are, before it.
  it.each([
    // A young-generation size.
    [
      ["--max-semi-space-size=8"],
      ["--single-threaded-gc", "--initial-old-space-size=512", "--v8-pool-size=1", "--max-semi-space-size=8"],
    ],
    // The collector's threads.
    [
      ["--no-single-threaded-gc"],
      [
        "--max-semi-space-size=64",
        "--initial-old-space-size=512",
        "--v8-pool-size=1",
        "--no-single-threaded-gc",
      ],
    ],
    [
      ["--no-parallel-scavenge"],
      [
        "--max-semi-space-size=64",
        "--initial-old-space-size=512",
        "--v8-pool-size=1",
        "--no-parallel-scavenge",
      ],
    ],
    // An old-generation or heap size.
    [
      ["--initial-old-space-size=128"],
      [
        "--max-semi-space-size=64",
        "--single-threaded-gc",
        "--v8-pool-size=1",
        "--initial-old-space-size=128",
      ],
    ],
    [
      ["--initial-heap-size=256"],
      ["--max-semi-space-size=64", "--single-threaded-gc", "--v8-pool-size=1", "--initial-heap-size=256"],
    ],
    // A worker-pool size.
    [
      ["--v8-pool-size=2"],
      [
        "--max-semi-space-size=64",
        "--single-threaded-gc",
        "--initial-old-space-size=512",
        "--v8-pool-size=2",
      ],
    ],
    // Every kind given: nothing added.
    [
      ["--max-semi-space-size=32", "--single-threaded-gc", "--initial-old-space-size=64", "--v8-pool-size=2"],
      ["--max-semi-space-size=32", "--single-threaded-gc", "--initial-old-space-size=64", "--v8-pool-size=2"],
    ],
  ])("keeps %j as given on the command line", async (nodeArgs, execArgv) => {
    expect((await started(["serve"], { nodeArgs })).execArgv).toEqual(execArgv);
  });

  it("keeps a young-generation size given in NODE_OPTIONS", async () => {
    expect(
      (await started(["serve"], { env: { NODE_OPTIONS: "--max-semi-space-size=16" } })).execArgv,
    ).toEqual(["--single-threaded-gc", "--initial-old-space-size=512", "--v8-pool-size=1"]);
  });
});
