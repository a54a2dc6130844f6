// `npm run bench`: the latency budget measured, side by side. Runs every section against the
// local stack (started if need be, never stopped) and writes bench/results/<date>.json, .md and
// the .md's SVG charts. Each comparison runs both sides in this run and reports their ratio.
// A run of some sections (--only) or a smoke run writes to bench/results/tmp/ (ignored by git)
// unless --out says where: it used to replace the day's full results, which the README cites.
//
//   npm run bench                      full run (about ten minutes)
//   npm run bench -- --smoke           seconds-long check that the harness works
//   npm run bench -- --only decode,model [--out /tmp/bench]
//   npm run bench -- --render bench/results/<date>.json   re-renders the .md and charts only
//   npm run bench -- --only ceiling --compare-with ../other-checkout   section 6 against its scorer too
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { FULL_PLAN, SMOKE_PLAN } from "./benchPlan.js";
import { SECTION_NAMES, type BenchResults, type SectionName } from "./report/benchResults.js";
import { renderReport, summaryTable } from "./report/markdown.js";
import { batching } from "./sections/batching.js";
import { ceiling } from "./sections/ceiling.js";
import { coldStart } from "./sections/coldStart.js";
import { decode } from "./sections/decode.js";
import { endToEnd } from "./sections/endToEnd.js";
import { kafkaClients } from "./sections/kafkaClients.js";
import { loadGenerator } from "./sections/loadGenerator.js";
import { model } from "./sections/model.js";
import { noisyNeighbour } from "./sections/noisyNeighbour.js";
import { promote } from "./sections/promote.js";
import { hotPath } from "./sections/hotPath.js";
import { state } from "./sections/state.js";
import { BenchContext } from "./support/benchContext.js";
import { buildCompiledScorer } from "./support/compiledScorer.js";
import { commitOf, comparedCheckout, type ComparedCheckout } from "./support/comparedCheckout.js";
import { stackEndpoints } from "./support/stackEndpoints.js";
import { applyV8Flags, V8_FLAGS } from "../src/ops/v8Flags.js";
import { givenScoringFlags, restartWithScoringFlags } from "../bin/nodeFlags.js";

// The in-process sections score with the settings every scoring command runs with, so they
// measure what `serve` runs: Node's start-up flags that bin/fraud-scorer.js gives `serve`
// (bin/nodeFlags.js; the bench starts itself again with them, as the bin does, unless they were
// given) and V8's settings (src/ops/v8Flags.ts). The serve children get both themselves; the
// passthroughs and section 11's load-generator child, started without the command, run without.
restartWithScoringFlags("serve");
applyV8Flags();
/** bin/nodeFlags.js's start-up flags the bench runs with, wherever they were given. */
const startFlags = givenScoringFlags(process.execArgv, process.env.NODE_OPTIONS);

const ROOT = fileURLToPath(new URL("../", import.meta.url));

// In-process sections first, then the ones that start scorers; the headline last.
const SECTIONS: ReadonlyArray<readonly [SectionName, (ctx: BenchContext) => Promise<unknown>]> = [
  ["decode", decode],
  ["model", model],
  ["state", state],
  ["hotPath", hotPath],
  ["batching", batching],
  ["ceiling", ceiling],
  ["kafkaClients", kafkaClients],
  ["coldStart", coldStart],
  ["loadGenerator", loadGenerator],
  ["endToEnd", endToEnd],
  ["noisyNeighbour", noisyNeighbour],
  ["promote", promote],
];

const { values: args } = parseArgs({
  options: {
    smoke: { type: "boolean", default: false },
    out: { type: "string" },
    only: { type: "string" },
    render: { type: "string" },
    "compare-with": { type: "string" },
  },
});

if (args.render !== undefined) {
  const file = resolve(args.render);
  const { markdown, charts } = renderReport(
    JSON.parse(readFileSync(file, "utf8")) as BenchResults,
    basename(file, ".json"),
  );
  writeFileSync(file.replace(/\.json$/, ".md"), markdown);
  for (const [name, svg] of charts) writeFileSync(join(dirname(file), name), svg);
  process.exit(0);
}
const only = args.only?.split(",").map((s) => s.trim());
const unknown = only?.filter((s) => !(SECTION_NAMES as readonly string[]).includes(s)) ?? [];
if (unknown.length > 0) {
  process.stderr.write(`unknown section(s) ${unknown.join(", ")}; sections: ${SECTION_NAMES.join(", ")}\n`);
  process.exit(2);
}

const startedAt = new Date();
const started = performance.now();
const elapsed = () => ((performance.now() - started) / 1000).toFixed(0).padStart(4);
const log = (line: string) => process.stderr.write(`[${elapsed()} s] ${line}\n`);
const plan = args.smoke ? SMOKE_PLAN : FULL_PLAN;
const partial = only !== undefined || plan.smoke;
const outDir = resolve(args.out ?? join(ROOT, partial ? "bench/results/tmp" : "bench/results"));
const date = startedAt.toISOString().slice(0, 10);
const loadAverageAtStart = loadavg()[0]!;

const endpoints = stackEndpoints(ROOT);
let compared: ComparedCheckout | undefined;
try {
  compared = args["compare-with"] === undefined ? undefined : comparedCheckout(args["compare-with"], log);
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(2);
}
if (compared !== undefined && only !== undefined && !only.includes("ceiling"))
  log(`--compare-with: only section 6 (ceiling) uses it, and this run leaves it out`);
const ctx = new BenchContext(ROOT, plan, endpoints, log, compared);
log(
  `${args.smoke ? "smoke" : "full"} run ${ctx.runId}; stack ${endpoints.kafkaBrokers}, ${endpoints.redisUrl}` +
    (compared === undefined ? "" : `; section 6 compares with ${compared.root} (${compared.commit})`),
);

buildCompiledScorer(ROOT, log);

const results: Record<string, unknown> = {};
const sectionSeconds: Record<string, number> = {};
let failures = 0;
try {
  for (const [name, run] of SECTIONS) {
    if (only && !only.includes(name)) {
      results[name] = { error: "skipped (--only)" };
      continue;
    }
    const t0 = performance.now();
    try {
      results[name] = await run(ctx);
    } catch (err) {
      failures++;
      results[name] = { error: (err as Error).message };
      log(`${name} failed: ${(err as Error).stack ?? String(err)}`);
    }
    sectionSeconds[name] = Math.round((performance.now() - t0) / 100) / 10;
  }
} finally {
  if (failures > 0) log(`scorer logs kept in ${ctx.workDir}`);
  await ctx.close({ keepLogs: failures > 0 }).catch((err: unknown) => log(`clean-up failed: ${String(err)}`));
}

const report = {
  meta: {
    date,
    startedAt: startedAt.toISOString(),
    durationS: Math.round((performance.now() - started) / 100) / 10,
    smoke: plan.smoke,
    command: ["npm run bench", ...commandArgs()].join(" "),
    commit: commitOf(ROOT),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model.trim() ?? "unknown",
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      v8Flags: [...startFlags, ...V8_FLAGS],
      platform: `${process.platform} ${process.arch}`,
      loadAverageAtStart,
      loadAverageAtEnd: loadavg()[0]!,
    },
    stack: { kafkaBrokers: endpoints.kafkaBrokers, redisUrl: endpoints.redisUrl, ...kafkaVersion() },
    sectionSeconds,
    plan,
  },
  ...results,
} as unknown as BenchResults;

mkdirSync(outDir, { recursive: true });
const base = join(outDir, date);
const { markdown, charts } = renderReport(report, date);
writeFileSync(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(`${base}.md`, markdown);
for (const [file, svg] of charts) writeFileSync(join(outDir, file), svg);
log(`wrote ${base}.json, ${base}.md and ${charts.size} charts (${failures} section(s) failed)`);
process.stdout.write(`${summaryTable(report)}\n`);
process.exit(failures > 0 ? 1 : 0);

/** The arguments this run was given that shape what it measured, after npm's "--". */
function commandArgs(): string[] {
  const given = [
    ...(plan.smoke ? ["--smoke"] : []),
    ...(only ? ["--only", only.join(",")] : []),
    ...(compared ? ["--compare-with", args["compare-with"]!] : []),
  ];
  return given.length === 0 ? [] : ["--", ...given];
}

// The version the stack recorded when this checkout started it. A broker started elsewhere (another
// checkout's stack, as when a fresh clone reuses a running one, or the user's own) is reported as
// not recorded rather than guessed from the jars this checkout would use.
function kafkaVersion(): { kafkaVersion?: string } {
  const file = join(ROOT, ".stack/endpoints.json");
  if (!existsSync(file)) return {};
  const recorded = JSON.parse(readFileSync(file, "utf8")) as {
    KAFKA_BROKERS?: string;
    versions?: { kafka?: string };
  };
  return recorded.KAFKA_BROKERS === endpoints.kafkaBrokers && recorded.versions?.kafka
    ? { kafkaVersion: recorded.versions.kafka }
    : {};
}
