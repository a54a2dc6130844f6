#!/usr/bin/env node
// Entry point of the `fraud-scorer` command.
//
// The Kafka client needs Node >= 22.22. A machine whose own node is older still runs the
// command: the pinned Node 22 that `npm ci` installs (the `node` devDependency, at
// node_modules/.bin/node) takes over, with the same arguments, stdio and exit status.
//
// Compiled or TypeScript: the JavaScript `npm run build` writes to dist/ runs when it is there
// and no source is newer (a container ships dist/ without src/); otherwise, in a checkout
// being worked on, the TypeScript sources run through tsx's loader, so a stale build is never
// what runs.
//
// The commands that score a stream start again, before any of that, with Node's start-up flags
// for them (bin/nodeFlags.js: a larger young generation), unless they were given.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import module from "node:module";
import { fileURLToPath } from "node:url";
import { restartWithScoringFlags, scoringNodeFlags } from "./nodeFlags.js";

const [major, minor] = process.versions.node.split(".").map(Number);
const tooOld = major < 22 || (major === 22 && minor < 22);

const command = process.argv.slice(2).find((arg) => !arg.startsWith("-"));
const nodeFlags = scoringNodeFlags(command, process.execArgv, process.env.NODE_OPTIONS);

const compiledMain = new URL("../dist/cli/main.js", import.meta.url);
const sources = new URL("../src/", import.meta.url);

const mtimeMs = (url) => statSync(url, { throwIfNoEntry: false })?.mtimeMs;
const newestSourceMs = (dir) =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .reduce((newest, entry) => Math.max(newest, statSync(`${entry.parentPath}/${entry.name}`).mtimeMs), 0);

if (tooOld) {
  const pinned = fileURLToPath(new URL("../node_modules/.bin/node", import.meta.url));
  if (!existsSync(pinned)) {
    process.stderr.write(
      `fraud-scorer needs Node >= 22.22 (this is ${process.version}); run \`npm ci\` to install the pinned Node 22\n`,
    );
    process.exit(2);
  }
  const child = spawn(
    pinned,
    [...nodeFlags, ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    {
      stdio: "inherit",
    },
  );
  // The child is the scorer: signals meant for it (SIGTERM drains and leaves the group) go on.
  const forwarded = ["SIGTERM", "SIGINT", "SIGHUP"];
  for (const signal of forwarded) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => {
    if (signal === null) process.exit(code ?? 1);
    // Die of the same signal, as the shell expects.
    for (const s of forwarded) process.removeAllListeners(s);
    process.kill(process.pid, signal);
  });
} else if (nodeFlags.length > 0) {
  restartWithScoringFlags(command);
} else {
  const builtMs = mtimeMs(compiledMain);
  if (builtMs !== undefined && (mtimeMs(sources) === undefined || newestSourceMs(sources) <= builtMs)) {
    // Keeps the bundle's compiled code on disk between starts.
    module.enableCompileCache?.();
    await import(compiledMain.href);
  } else {
    const { register } = await import("tsx/esm/api");
    register();
    await import("../src/cli/main.ts");
  }
}
