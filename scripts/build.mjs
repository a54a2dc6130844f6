// `npm run build`: the compiled JavaScript in dist/ that the bin runs when it is present. The
// folder is emptied first so a deleted source leaves no module behind; the .proto files are
// copied beside the code because the schema registry client reads them relative to itself.
//   node scripts/build.mjs [--out-dir <dir>] [--no-gen]   (the container test builds elsewhere)
import { execFileSync } from "node:child_process";
import { cpSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: { "out-dir": { type: "string", default: "dist" }, "no-gen": { type: "boolean", default: false } },
});
const outDir = values["out-dir"];

rmSync(outDir, { recursive: true, force: true });
if (!values["no-gen"]) execFileSync(process.execPath, ["scripts/gen-proto.mjs"], { stdio: "inherit" });
execFileSync(
  process.execPath,
  [join("node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json", "--outDir", outDir],
  { stdio: "inherit" },
);
cpSync("proto", join(outDir, "proto"), { recursive: true });
