// Requests the real registry leaves unanswered, through a proxy that holds their bytes: a
// schema-id lookup or a registration gives up on that attempt and asks again, and fails, saying
// so, when no attempt is answered (src/codec/schemaRegistry.ts, REQUEST_TIMEOUT_MS).
import { afterEach, describe, expect, it } from "vitest";
import { startDelayProxy, type DelayProxy } from "../../chaos/delayProxy.js";
import { SchemaRegistry, TRANSACTION_TYPE, transactionProtoText } from "../../src/codec/schemaRegistry.js";
import { testEndpoints } from "./endpoints.js";

const endpoints = testEndpoints();
const registryUrl = new URL(endpoints.schemaRegistryUrl);
/** Longer than any test here waits: bytes held this long are, for the test, never delivered. */
const HELD_MS = 60_000;
const REQUEST_TIMEOUT_MS = 400;

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
  return new SchemaRegistry({ url: url.toString(), requestTimeoutMs: REQUEST_TIMEOUT_MS });
}

/**
 * What `request` answers through a proxy that holds its first attempt and lets the rest pass:
 * after the first attempt's time limit, long before the held bytes.
 */
async function answeredBySecondAttempt<T>(request: (registry: SchemaRegistry) => Promise<T>): Promise<T> {
  proxy = await startDelayProxy({ targetPort: Number(registryUrl.port), delayMs: HELD_MS });
  const registry = throughProxy(proxy.port);
  const started = performance.now();
  const answer = request(registry);
  // The first attempt's request is held; what is sent from now on passes at once.
  setTimeout(() => proxy?.setDelay(0), REQUEST_TIMEOUT_MS / 4);
  const answered = await answer;
  const tookMs = performance.now() - started;
  expect(tookMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS);
  expect(tookMs).toBeLessThan(HELD_MS / 4);
  return answered;
}

/** `request`, through a proxy that holds every attempt, fails with `message`. */
async function failsUnanswered(
  request: (registry: SchemaRegistry) => Promise<unknown>,
  message: string,
): Promise<void> {
  proxy = await startDelayProxy({ targetPort: Number(registryUrl.port), delayMs: HELD_MS });
  const registry = throughProxy(proxy.port);
  const started = performance.now();
  await expect(request(registry)).rejects.toThrow(message);
  // Three attempts and the waits between them, not fetch's five minutes.
  const tookMs = performance.now() - started;
  expect(tookMs).toBeGreaterThanOrEqual(3 * REQUEST_TIMEOUT_MS);
  expect(tookMs).toBeLessThan(HELD_MS / 4);
}

describe("a schema-id lookup the registry does not answer", () => {
  it("gives up on that attempt after its time limit and asks again", async () => {
    const id = await transactionSchemaId();
    expect(await answeredBySecondAttempt((registry) => registry.firstMessageType(id))).toBe(TRANSACTION_TYPE);
  });

  it("fails, naming the time limit, when no attempt is answered", async () => {
    const id = await transactionSchemaId();
    await failsUnanswered(
      (registry) => registry.firstMessageType(id),
      `schema registry did not answer in ${REQUEST_TIMEOUT_MS} ms for schema id ${id}`,
    );
  });
});

describe("a registration the registry does not answer", () => {
  const subject = "rl-registration-value";

  it("gives up on that attempt after its time limit and registers on the next", async () => {
    const id = await transactionSchemaId();
    // The schema the registry already holds, so the same id as registered directly.
    expect(
      await answeredBySecondAttempt((registry) => registry.register(subject, transactionProtoText())),
    ).toBe(id);
  });

  it("fails, naming the time limit and the subject, when no attempt is answered", async () => {
    await failsUnanswered(
      (registry) => registry.register(subject, transactionProtoText()),
      `schema registry did not answer in ${REQUEST_TIMEOUT_MS} ms registering ${subject}`,
    );
  });

  it("fails, naming the subject and the answer, when the registry refuses the schema", async () => {
    const registry = new SchemaRegistry({ url: endpoints.schemaRegistryUrl });
    await expect(registry.register("rl-refused-value", "this is not a .proto file {")).rejects.toThrow(
      /^schema registry refused rl-refused-value: 4\d\d/,
    );
  });
});
