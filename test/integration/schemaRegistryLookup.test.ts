// A schema-id lookup the real registry leaves unanswered, through a proxy that holds its bytes:
// the lookup gives up on that attempt and asks again, and fails, saying so, when no attempt is
// answered (src/codec/schemaRegistry.ts, LOOKUP_TIMEOUT_MS).
import { afterEach, describe, expect, it } from "vitest";
import { startDelayProxy, type DelayProxy } from "../../chaos/delayProxy.js";
import { SchemaRegistry, TRANSACTION_TYPE } from "../../src/codec/schemaRegistry.js";
import { testEndpoints } from "./endpoints.js";

const endpoints = testEndpoints();
const registryUrl = new URL(endpoints.schemaRegistryUrl);
/** Longer than any test here waits: bytes held this long are, for the test, never delivered. */
const HELD_MS = 60_000;
const LOOKUP_TIMEOUT_MS = 400;

let proxy: DelayProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

/** The registry's own id for the transaction contract, registered directly. */
async function transactionSchemaId(): Promise<number> {
  const direct = new SchemaRegistry({ url: endpoints.schemaRegistryUrl });
  return (
    await direct.registerContracts({ transactionsTopic: "rl-transactions", decisionsTopic: "rl-decisions" })
  ).transactionSchemaId;
}

/** A client of the same registry through `proxy`. */
function throughProxy(port: number): SchemaRegistry {
  const url = new URL(registryUrl);
  url.port = String(port);
  return new SchemaRegistry({ url: url.toString(), lookupTimeoutMs: LOOKUP_TIMEOUT_MS });
}

describe("a schema-id lookup the registry does not answer", () => {
  it("gives up on that attempt after its time limit and asks again", async () => {
    const id = await transactionSchemaId();
    proxy = await startDelayProxy({ targetPort: Number(registryUrl.port), delayMs: HELD_MS });
    const registry = throughProxy(proxy.port);
    const started = performance.now();
    const lookup = registry.firstMessageType(id);
    // The first attempt's request is held; what is sent from now on passes at once.
    setTimeout(() => proxy?.setDelay(0), LOOKUP_TIMEOUT_MS / 4);
    expect(await lookup).toBe(TRANSACTION_TYPE);
    // Answered by a second attempt: after the first one's time limit, long before the held bytes.
    const tookMs = performance.now() - started;
    expect(tookMs).toBeGreaterThanOrEqual(LOOKUP_TIMEOUT_MS);
    expect(tookMs).toBeLessThan(HELD_MS / 4);
  });

  it("fails, naming the time limit, when no attempt is answered", async () => {
    const id = await transactionSchemaId();
    proxy = await startDelayProxy({ targetPort: Number(registryUrl.port), delayMs: HELD_MS });
    const registry = throughProxy(proxy.port);
    const started = performance.now();
    await expect(registry.firstMessageType(id)).rejects.toThrow(
      `schema registry did not answer in ${LOOKUP_TIMEOUT_MS} ms for schema id ${id}`,
    );
    // Three attempts and the waits between them, not fetch's five minutes.
    const tookMs = performance.now() - started;
    expect(tookMs).toBeGreaterThanOrEqual(3 * LOOKUP_TIMEOUT_MS);
    expect(tookMs).toBeLessThan(HELD_MS / 4);
  });
});
