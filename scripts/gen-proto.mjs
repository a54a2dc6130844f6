// Generates static Protobuf code from proto/ into src/codec/generated (git-ignored).
// Runs on `npm ci` (prepare) and before builds; the output is never edited by hand.
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";

const protoDir = "proto/fraud/v1";
const outDir = "src/codec/generated";
const protos = readdirSync(protoDir)
  .filter((f) => f.endsWith(".proto"))
  .map((f) => join(protoDir, f));
mkdirSync(outDir, { recursive: true });
const bin = (name) => join("node_modules", ".bin", name);
const js = join(outDir, "fraud.js");
execFileSync(
  bin("pbjs"),
  [
    "-t",
    "static-module",
    "-w",
    "scripts/pbjs-esm-wrapper.js",
    "--es6",
    "--no-verify",
    "--force-number",
    "--no-beautify",
    "-o",
    js,
    ...protos,
  ],
  { stdio: "inherit" },
);
execFileSync(bin("pbts"), ["--no-comments", "-o", join(outDir, "fraud.d.ts"), js], { stdio: "inherit" });
