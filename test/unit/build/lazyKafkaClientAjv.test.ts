// The bundle swaps the Kafka client's Ajv for one that compiles on first use
// (scripts/lazyKafkaClientAjv.mjs). What a user can notice must not change: bad options are
// refused with the same error, and good ones pass.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as eagerClient from "@platformatic/kafka";
import { lazyKafkaClientAjv } from "../../../scripts/lazyKafkaClientAjv.mjs";

type Client = typeof eagerClient;

// Inside the tree, so the packages left outside the bundle resolve from node_modules.
const outDir = mkdtempSync(join(process.cwd(), "node_modules/.cache-lazy-ajv-"));
const bundleFile = join(outDir, "kafkaClient.mjs");
let bundledClient: Client;

beforeAll(async () => {
  await build({
    stdin: { contents: 'export * from "@platformatic/kafka";', resolveDir: process.cwd(), loader: "js" },
    outfile: bundleFile,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node22",
    external: ["@platformatic/wasm-utils", "@node-rs/crc32"],
    banner: {
      js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
    },
    plugins: [lazyKafkaClientAjv],
    logLevel: "warning",
  });
  bundledClient = (await import(pathToFileURL(bundleFile).href)) as Client;
}, 60_000);

afterAll(() => rmSync(outDir, { recursive: true, force: true }));

const BROKERS = ["127.0.0.1:1"];
const refusal = (make: () => { close(): Promise<void> }): string | undefined => {
  try {
    void make().close();
    return undefined;
  } catch (err) {
    return `${(err as Error).name}: ${(err as Error).message}`;
  }
};
const badStrictOptions = (client: Client) => () =>
  new client.Admin({ clientId: "c", bootstrapBrokers: BROKERS, retries: -5, strict: true });
const badGroupOptions = (client: Client) => () =>
  new client.Consumer({ clientId: "c", bootstrapBrokers: BROKERS, groupId: "g", sessionTimeout: -1 });
const goodOptions = (client: Client) => () =>
  new client.Consumer({ clientId: "c", bootstrapBrokers: BROKERS, groupId: "g", strict: true });

describe("the bundled Kafka client, its option schemas compiled on first use", () => {
  it("is the lazy Ajv that the bundle holds", () => {
    expect(readFileSync(bundleFile, "utf8")).toContain("scripts/lazyAjv2020.mjs");
  });

  it("refuses bad client options with the error the package gives", () => {
    const expected = refusal(badStrictOptions(eagerClient));
    expect(expected).toMatch(/retries must be >= 0/);
    expect(refusal(badStrictOptions(bundledClient))).toBe(expected);
  });

  it("refuses bad consumer-group options (checked even when not strict) with the package's error", () => {
    const expected = refusal(badGroupOptions(eagerClient));
    expect(expected).toMatch(/sessionTimeout must be >= 0/);
    expect(refusal(badGroupOptions(bundledClient))).toBe(expected);
  });

  it("accepts good options", () => {
    expect(refusal(goodOptions(bundledClient))).toBeUndefined();
  });
});
