// The scorers the bench starts run the bundled JavaScript, as the container does: build dist/
// once before any section spawns one (the bin runs dist/ when no source is newer).
import { execFileSync } from "node:child_process";

export function buildCompiledScorer(root: string, log: (line: string) => void): void {
  const started = performance.now();
  execFileSync(process.execPath, ["scripts/build.mjs"], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
  });
  log(
    `built ${root.replace(/\/$/, "")}/dist in ${((performance.now() - started) / 1000).toFixed(1)} s: scorers run compiled JavaScript`,
  );
}
