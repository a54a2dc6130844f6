import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { commitOf, comparedCheckout } from "../../../bench/support/comparedCheckout.js";

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "compared-checkout-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("a checkout to compare with (bench --compare-with)", () => {
  it("is named by its commit, marked when its tracked files have changed since", () => {
    const dir = tempDir();
    const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, encoding: "utf8" }).trim();
    git("init", "-q");
    writeFileSync(join(dir, "a.txt"), "one\n");
    git("add", "a.txt");
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "one");
    const head = git("rev-parse", "--short", "HEAD");
    expect(commitOf(dir)).toBe(head);
    writeFileSync(join(dir, "untracked.txt"), "not part of the code\n");
    expect(commitOf(dir)).toBe(head);
    writeFileSync(join(dir, "a.txt"), "two\n");
    expect(commitOf(dir)).toBe(`${head}+changes`);
    expect(commitOf(tempDir())).toBe("unknown");
  });

  it("is refused with what is missing: the scorer's entry point, or its installed dependencies", () => {
    const dir = tempDir();
    expect(() => comparedCheckout(dir, () => {})).toThrow(
      /not a fraud-scorer checkout \(no bin\/fraud-scorer\.js\)/,
    );
    mkdirSync(join(dir, "bin"));
    writeFileSync(join(dir, "bin/fraud-scorer.js"), "");
    expect(() => comparedCheckout(dir, () => {})).toThrow(/no node_modules there; run npm ci in it first/);
  });
});
