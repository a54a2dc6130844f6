// `npm run bench -- --smoke` as a user runs it, against the integration stack: the harness still
// measures every section and writes a results file whose numbers are numbers. Results are data,
// so nothing here judges how fast anything is.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { SECTION_NAMES, type BenchResults } from "../../bench/report/benchResults.js";
import { testEndpoints } from "./endpoints.js";

const endpoints = testEndpoints();
const out = mkdtempSync(join(tmpdir(), "bench-smoke-"));

afterAll(() => rmSync(out, { recursive: true, force: true }));

/** Every number in the tree, with its path. */
function numbers(value: unknown, path = ""): Array<[string, number]> {
  if (typeof value === "number") return [[path, value]];
  if (Array.isArray(value)) return value.flatMap((v, i) => numbers(v, `${path}[${i}]`));
  if (typeof value === "object" && value !== null)
    return Object.entries(value).flatMap(([k, v]) => numbers(v, path ? `${path}.${k}` : k));
  return [];
}

it("the smoke benchmark writes every section, with finite latencies, throughputs and ratios", async () => {
  const child = spawn(process.execPath, ["--import", "tsx", "bench/run.ts", "--smoke", "--out", out], {
    env: {
      ...process.env,
      KAFKA_BROKERS: endpoints.kafkaBrokers,
      SCHEMA_REGISTRY_URL: endpoints.schemaRegistryUrl,
      REDIS_URL: endpoints.redisUrl,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  child.stderr.on("data", (d: Buffer) => (log += d.toString()));
  const [code] = (await once(child, "exit")) as [number | null];
  expect(code, log.slice(-4000)).toBe(0);

  const files = readdirSync(out);
  const json = files.find((f) => f.endsWith(".json"))!;
  expect(files).toContain(json.replace(/\.json$/, ".md"));
  // Every chart the report embeds was written beside it.
  const report = readFileSync(join(out, json.replace(/\.json$/, ".md")), "utf8");
  const charts = [...report.matchAll(/!\[[^\]]*\]\(([^)]+\.svg)\)/g)].map((m) => m[1]!);
  expect(charts.length).toBeGreaterThan(0);
  for (const chart of charts) expect(files).toContain(chart);
  const results = JSON.parse(readFileSync(join(out, json), "utf8")) as BenchResults;
  expect(results.meta.smoke).toBe(true);
  for (const name of SECTION_NAMES) expect(results[name], name).not.toHaveProperty("error");

  for (const [path, n] of numbers(results)) expect(Number.isFinite(n), `${path} = ${n}`).toBe(true);

  const e2e = results.endToEnd as Exclude<BenchResults["endToEnd"], { error: string }>;
  for (const step of [...e2e.fixedRates, ...e2e.search.probes]) {
    expect(step.decided).toBeGreaterThan(0);
    for (const p of [step.endToEnd.p50Ms, step.endToEnd.p99Ms, step.endToEnd.p999Ms, step.endToEnd.maxMs])
      expect(p).toBeGreaterThan(0);
    expect(step.endToEnd.p50Ms).toBeLessThanOrEqual(step.endToEnd.maxMs);
    expect(step.stages.queue.p50Ms).toBeGreaterThan(0);
    // Stages the rules' fallback skips are measured over the model's decisions only.
    if (step.stages.model.count > 0) expect(step.stages.model.p50Ms).toBeGreaterThan(0);
  }
  expect(e2e.search.probes.length).toBeGreaterThan(0);
  expect(e2e.search.highestRateUnderBudget).toBeGreaterThanOrEqual(0);

  const positive: Array<[string, number]> = [];
  const r = results as unknown as Record<string, Record<string, unknown>>;
  const take = (section: string, ...keys: string[]) => {
    for (const key of keys) positive.push([`${section}.${key}`, r[section]![key] as number]);
  };
  take("decode", "jsonOverProtobufCost");
  take(
    "model",
    "fp32OverInt8AtBatch1",
    "fp32OverInt8AtLargestBatch",
    "batch1OverLargestInt8",
    "batch1OverLargestFp32",
  );
  take("ceiling", "scorerOverPassthrough");
  take("state", "storeBatch1OverLargestBatch");
  take(
    "coldStart",
    "firstDecisionWithoutOverWith",
    "firstModelStageWithoutOverWith",
    "startToReadyWithOverWithout",
  );
  const batching = results.batching as Exclude<BenchResults["batching"], { error: string }>;
  for (const load of batching.loads)
    positive.push(
      [`batching.${load.name}.p99Ratio`, load.p99Ratio],
      [`batching.${load.name}.p50Ratio`, load.p50Ratio],
    );
  const state = results.state as Exclude<BenchResults["state"], { error: string }>;
  for (const row of state.batchSizes)
    positive.push([`state.${row.batchSize}.perTransactionOverPipelined`, row.perTransactionOverPipelined]);
  for (const [path, n] of positive) expect(n, path).toBeGreaterThan(0);
}, 180_000);
