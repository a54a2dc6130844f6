// --compare-with DIR: another checkout of fraud-scorer (its own `npm ci` done) whose scorer also
// drains section 6's backlog, in the same rounds as this checkout's, so a change is measured
// against the code before it on the same machine in the same minutes. Runs of one commit an hour
// apart on this shared 2-core machine differed by more than most single changes (section 6's
// CPU per drained record: 32–40 µs for one commit within an hour, 2026-12-06), and a session
// comparing two checkouts had patched the section by hand each time. The other checkout's scorer
// is started the way this checkout starts its own (scorerEnv: the same configuration keys), so
// both must read them: compare commits of one line of development, not across a rename of a key.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { buildCompiledScorer } from "./compiledScorer.js";

export interface ComparedCheckout {
  /** Absolute path of the checkout. */
  readonly root: string;
  /** Its commit, as commitOf gives it. */
  readonly commit: string;
}

/**
 * The checkout at `dir`, checked and built: its scorer runs the bundled JavaScript, as this
 * checkout's does (a checkout without dist/ would run its TypeScript through tsx instead).
 */
export function comparedCheckout(dir: string, log: (line: string) => void): ComparedCheckout {
  const root = resolve(dir);
  if (!existsSync(join(root, "bin/fraud-scorer.js")))
    throw new Error(`--compare-with ${dir}: not a fraud-scorer checkout (no bin/fraud-scorer.js)`);
  if (!existsSync(join(root, "node_modules")))
    throw new Error(`--compare-with ${dir}: no node_modules there; run npm ci in it first`);
  buildCompiledScorer(root, log);
  return { root, commit: commitOf(root) };
}

/** The short commit of a checkout, "+changes" when tracked files differ from it; "unknown" outside git. */
export function commitOf(root: string): string {
  try {
    const git = (...args: string[]) => execFileSync("git", args, { cwd: root, encoding: "utf8" }).trim();
    const head = git("rev-parse", "--short", "HEAD");
    return git("status", "--porcelain", "--untracked-files=no") === "" ? head : `${head}+changes`;
  } catch {
    return "unknown";
  }
}
