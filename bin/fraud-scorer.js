#!/usr/bin/env node
// Entry point of the `fraud-scorer` command.

// Compiled or TypeScript: the JavaScript `npm run build` writes to dist/ runs when it is there
// and no source is newer (a container ships dist/ without src/); otherwise, in a checkout
// being worked on, the TypeScript sources run through tsx's loader, so a stale build is never
// what runs.
import { readdirSync, statSync } from "node:fs";
import module from "node:module";

const compiledMain = new URL("../dist/cli/main.js", import.meta.url);
const sources = new URL("../src/", import.meta.url);

const mtimeMs = (url) => statSync(url, { throwIfNoEntry: false })?.mtimeMs;
const newestSourceMs = (dir) =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .reduce((newest, entry) => Math.max(newest, statSync(`${entry.parentPath}/${entry.name}`).mtimeMs), 0);

const builtMs = mtimeMs(compiledMain);
if (builtMs !== undefined && (mtimeMs(sources) === undefined || newestSourceMs(sources) <= builtMs)) {
  // Node 22+ keeps the bundle's compiled code on disk between starts (a no-op on Node 20).
  module.enableCompileCache?.();
  await import(compiledMain.href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli/main.ts");
}
