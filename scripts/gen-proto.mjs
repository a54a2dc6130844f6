// Generates static Protobuf code from proto/ into src/codec/generated (git-ignored).
// Runs on `npm ci` (prepare) and before builds; the output is never edited by hand.
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
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
// The decision's writer, from the same .proto: pbf (Mapbox's Protobuf library) writes every field
// into one growing byte array, where protobufjs's writer allocates an operation object per field
// and the message's buffer per call; the scorer encodes a decision per transaction
// (src/codec/decisionWire.ts has the measurement). Decisions are still read with protobufjs.
// pbf prints the code, which is written as it comes: the child runs without NODE_OPTIONS, so that
// nothing a caller's options make Node print (a module given with --import that turns on V8's GC
// trace, say) ends up in the generated file.
const decisionWriter = (dts) =>
  execFileSync(bin("pbf"), [join(protoDir, "decision.proto"), "--no-read", ...(dts ? ["--dts"] : [])], {
    env: { ...process.env, NODE_OPTIONS: "" },
  });
writeFileSync(join(outDir, "decisionWriter.js"), decisionWriter(false));
writeFileSync(join(outDir, "decisionWriter.d.ts"), decisionWriter(true));
