// `npm run build`: the JavaScript the bin runs when it is present (dist/cli/main.js), and the
// container ships. One bundle per command (esbuild code splitting keeps the CLI's lazy command
// imports lazy), with the npm packages inside it: a start then reads a few files instead of
// ~500 modules, which is most of what a start costs. Kept outside the bundle: packages with
// native addons, pino (its transports load worker files by path) and @platformatic/wasm-utils
// (it reads its .wasm file next to its own module).
// dist/cli/ sits as deep as src/cli/, so the lookups relative to a module's own URL (proto/,
// rules/) resolve to the same files from the bundle as from the sources.
// The Kafka client's Ajv is swapped for one that compiles each schema on first use
// (scripts/lazyKafkaClientAjv.mjs): a start then pays only for the validators it runs.
//   node scripts/build.mjs [--out-dir <dir>] [--no-gen]   (the container test builds elsewhere)
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { lazyKafkaClientAjv } from "./lazyKafkaClientAjv.mjs";

const { values } = parseArgs({
  options: { "out-dir": { type: "string", default: "dist" }, "no-gen": { type: "boolean", default: false } },
});
const outDir = values["out-dir"];

rmSync(outDir, { recursive: true, force: true });
if (!values["no-gen"]) execFileSync(process.execPath, ["scripts/gen-proto.mjs"], { stdio: "inherit" });
await build({
  entryPoints: ["src/cli/main.ts"],
  outdir: join(outDir, "cli"),
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node22",
  sourcemap: true,
  external: ["onnxruntime-node", "pino", "thread-stream", "@platformatic/wasm-utils"],
  // The bundled CommonJS packages call require(); an ES module has none of its own.
  banner: {
    js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
  },
  plugins: [lazyKafkaClientAjv],
  logLevel: "warning",
});
