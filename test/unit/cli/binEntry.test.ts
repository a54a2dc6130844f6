// The bin runs the build in dist/ only when no source is newer than it, so a checkout being
// worked on never runs stale code, and a container (dist/ without src/) runs the build.
import { execFile } from "node:child_process";
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
  cpSync(join(ROOT, "bin/fraud-scorer.js"), join(dir, "bin/fraud-scorer.js"));
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
