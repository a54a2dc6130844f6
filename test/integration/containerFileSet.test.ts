// The container starts: the runtime file set is assembled exactly as the Dockerfile's runtime
// stage COPY lines say (parsed here, so the two cannot drift), with the production
// dependencies only, and the command runs there. Bundled JavaScript only: no src/, no tsx.
import { execFile } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { committedModelDir } from "../support/committedModel.js";
import { dockerfileRuntimeStage, type RuntimeCopy } from "../support/dockerfileRuntime.js";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BUILD_WORKDIR = "/app";

let work: string;
let app: string;
let env: NodeJS.ProcessEnv;

/** The packages `npm prune --omit=dev` keeps: every top-level lockfile entry not marked dev. */
function productionPackages(): string[] {
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
    packages: Record<string, { dev?: boolean }>;
  };
  return Object.entries(lock.packages)
    .filter(([path, entry]) => /^node_modules\/(@[^/]+\/)?[^/]+$/.test(path) && entry.dev !== true)
    .map(([path]) => path.slice("node_modules/".length));
}

/** node_modules holding links to the production packages only, so a dev import fails here. */
function linkProductionModules(destination: string): void {
  for (const name of productionPackages()) {
    mkdirSync(dirname(join(destination, name)), { recursive: true });
    symlinkSync(join(ROOT, "node_modules", name), join(destination, name), "dir");
  }
}

/** What the build stage leaves at `source` (an absolute path in its file system). */
function buildStageOutput(source: string, buildDir: string, destination: string): void {
  const path = posix.relative(BUILD_WORKDIR, source);
  if (path === "node_modules") linkProductionModules(destination);
  else if (path === "dist" || path.startsWith("dist/"))
    cpSync(join(buildDir, path), destination, { recursive: true });
  else throw new Error(`this test does not know how the build stage makes ${source}`);
}

function assemble(copy: RuntimeCopy, workdir: string, buildDir: string): void {
  const destination = join(app, posix.relative(workdir, posix.resolve(workdir, copy.destination)));
  for (const source of copy.sources) {
    if (copy.from !== undefined) {
      if (copy.from !== "build") throw new Error(`unknown stage ${copy.from}`);
      buildStageOutput(source, buildDir, destination);
    } else if (statSync(join(ROOT, source)).isDirectory()) {
      cpSync(join(ROOT, source), destination, { recursive: true });
    } else {
      mkdirSync(destination, { recursive: true });
      cpSync(join(ROOT, source), join(destination, posix.basename(source)));
    }
  }
}

const fraudScorer = (...args: string[]) =>
  run(process.execPath, ["bin/fraud-scorer.js", ...args], { cwd: app, env, timeout: 60_000 });

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "fraud-scorer-container-"));
  app = join(work, "app");
  const buildDir = join(work, "build");
  // The build stage's `npm run build` (the generated code is there already: `npm ci` made it).
  await run(process.execPath, ["scripts/build.mjs", "--out-dir", join(buildDir, "dist"), "--no-gen"], {
    cwd: ROOT,
  });
  const stage = dockerfileRuntimeStage(readFileSync(join(ROOT, "Dockerfile"), "utf8"));
  for (const copy of stage.copies) assemble(copy, stage.workdir, buildDir);
  env = { PATH: process.env.PATH, HOME: process.env.HOME, ...stage.env };
}, 300_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("the container's file set", () => {
  it("holds compiled code and no sources, offline tooling or dev dependencies", async () => {
    expect(existsSync(join(app, "dist/cli/main.js"))).toBe(true);
    for (const absent of ["src", "pipelines", "bench", "test"])
      expect(existsSync(join(app, absent)), absent).toBe(false);
    const importFrom = (specifier: string) =>
      run(process.execPath, ["--input-type=module", "-e", `await import(${JSON.stringify(specifier)})`], {
        cwd: app,
        env,
      });
    await expect(importFrom("ioredis")).resolves.toBeDefined();
    for (const devOnly of ["tsx", "vitest", "typescript"])
      await expect(importFrom(devOnly), devOnly).rejects.toThrow(/ERR_MODULE_NOT_FOUND|Cannot find package/);
  });

  it("lists every command", async () => {
    const { stdout } = await fraudScorer("--help");
    for (const command of ["serve", "model", "replay", "produce", "decisions", "demo"])
      expect(stdout).toMatch(new RegExp(`^  ${command}\\b`, "m"));
  });

  it("loads serve: its help lists the configuration", async () => {
    const { stdout } = await fraudScorer("serve", "--help");
    expect(stdout).toContain("consume transactions, score them");
    expect(stdout).toContain("--model-dir");
  });

  it("verifies the committed model", async () => {
    const dir = committedModelDir();
    const { stdout } = await fraudScorer("model", "verify", dir);
    expect(stdout).toMatch(/^OK fraud-lstm /);
  });
});
