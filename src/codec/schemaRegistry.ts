// The one module that talks to the schema registry (any Confluent-compatible one; locally
// Apicurio's ccompat API), over its REST API. @kafkajs/confluent-schema-registry 3.6.1 (the
// last release for Node 20) cannot be used for our contract: it resolves a Protobuf schema's
// type as "<package>..<Type>" (so any schema with a `package` fails to register) and its wire
// encoder omits Confluent's message-index array. Framing is ours (confluent.ts).
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import protobuf from "protobufjs";

export interface SchemaRegistryOptions {
  readonly url: string;
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  /** How long one attempt of a request may go unanswered (REQUEST_TIMEOUT_MS unless told). */
  readonly requestTimeoutMs?: number;
}

/**
 * One attempt of a request (an id's lookup, a schema's registration) gives up after this long,
 * and the request is tried again up to REQUEST_ATTEMPTS times in all before it fails (a failed
 * lookup stops the scorer uncommitted: transactionConsumer.ts; a failed registration stops its
 * command's start-up). Without a time limit of its own an unanswered request waited for fetch's
 * (undici's) five-minute header timeout: on CI (2026-12-07,
 * test/integration/deadLetterSize.test.ts) one record of an unknown schema id, of 832 in the
 * corpus, was still waiting for its lookup after two minutes, every record behind it in its lane
 * waiting too and their offsets uncommitted, the scorer's log silent (the same test had stopped
 * short once before, 2026-12-06, undiagnosed); and a start-up whose registration went
 * unanswered would have waited as long before saying anything. A registry answers either in
 * milliseconds. Registering again is safe: the registry answers a schema it holds with its id.
 */
const REQUEST_TIMEOUT_MS = 5_000;
const REQUEST_ATTEMPTS = 3;
const REQUEST_RETRY_DELAY_MS = 250;

export const TRANSACTION_TYPE = "fraud.v1.Transaction";
export const DECISION_TYPE = "fraud.v1.Decision";

const protoText = (file: string) =>
  readFileSync(new URL(`../../proto/fraud/v1/${file}`, import.meta.url), "utf8");
export const transactionProtoText = (): string => protoText("transaction.proto");
export const decisionProtoText = (): string => protoText("decision.proto");

/** Topic-name strategy, as Confluent serializers default to. */
export const valueSubject = (topic: string): string => `${topic}-value`;

export interface ContractSchemaIds {
  readonly transactionSchemaId: number;
  readonly decisionSchemaId: number;
}

/**
 * Ids the registry did not know, remembered (oldest forgotten first) up to this many: a stream
 * of records each with a different made-up id (the malformed corpus) must not grow memory
 * without bound. Known ids are few and kept forever.
 */
const MAX_UNKNOWN_IDS = 10_000;

/**
 * Lookups in flight at once. A real rollout brings one new id, or a few (and one request per
 * id); a stream of made-up ids (the malformed corpus: 14,000 distinct ones) brings hundreds a
 * second, and each costs the scorer and the registry CPU that good traffic needs: at 8 at a time
 * on a loaded machine good traffic's p99 went from 2 s to 43 s. The records wait off the scoring
 * path (transactionConsumer.ts), so few at a time only delays their dead letters.
 */
const MAX_CONCURRENT_LOOKUPS = 2;

export class SchemaRegistry {
  readonly #options: SchemaRegistryOptions;
  /** id → full name of the schema's first message; ids are immutable, so cache forever. */
  readonly #firstMessageById = new Map<number, string>();
  /** Ids the registry answered 404 for, or whose schema names no Protobuf message; oldest first. */
  readonly #unknownIds = new Set<number>();
  /** One request per id however many records ask for it at once. */
  readonly #lookups = new Map<number, Promise<string | undefined>>();
  #lookupsRunning = 0;
  readonly #lookupSlots: (() => void)[] = [];

  constructor(options: SchemaRegistryOptions) {
    this.#options = options;
  }

  /** Registers (or finds, if already registered) a Protobuf schema under a subject. */
  async register(subject: string, schemaText: string): Promise<number> {
    const init: RegistryRequestInit = {
      method: "POST",
      headers: { "content-type": "application/vnd.schemaregistry.v1+json" },
      body: JSON.stringify({ schemaType: "PROTOBUF", schema: schemaText }),
    };
    return this.#request(
      `subjects/${encodeURIComponent(subject)}/versions`,
      init,
      `registering ${subject}`,
      async (response) => {
        const body = (await response.json().catch(() => ({}))) as { id?: number; message?: string };
        if (!response.ok || typeof body.id !== "number") {
          const refusal =
            `schema registry refused ${subject}: ${response.status} ${body.message ?? ""}`.trim();
          throw new RegistryAnswerError(response.status, refusal);
        }
        return body.id;
      },
    );
  }

  /** Registers Transaction and Decision under their topics' value subjects. */
  async registerContracts({
    transactionsTopic = "transactions",
    decisionsTopic = "decisions",
  }: { transactionsTopic?: string; decisionsTopic?: string } = {}): Promise<ContractSchemaIds> {
    const [transactionSchemaId, decisionSchemaId] = await Promise.all([
      this.register(valueSubject(transactionsTopic), transactionProtoText()),
      this.register(valueSubject(decisionsTopic), decisionProtoText()),
    ]);
    return { transactionSchemaId, decisionSchemaId };
  }

  /**
   * Full name of the first message type in the schema with this id (what message index [0]
   * names), or undefined when the registry does not know the id or it is not Protobuf.
   */
  async firstMessageType(id: number): Promise<string | undefined> {
    const known = this.#firstMessageById.get(id);
    if (known !== undefined) return known;
    if (this.#unknownIds.has(id)) return undefined;
    let lookup = this.#lookups.get(id);
    if (lookup === undefined) {
      lookup = this.#lookUp(id).finally(() => this.#lookups.delete(id));
      this.#lookups.set(id, lookup);
    }
    return lookup;
  }

  async #lookUp(id: number): Promise<string | undefined> {
    if (this.#lookupsRunning >= MAX_CONCURRENT_LOOKUPS)
      await new Promise<void>((resolve) => this.#lookupSlots.push(resolve));
    this.#lookupsRunning++;
    try {
      // Uncompressed: a schema is a few KB, and a zlib stream per answer was the scorer's largest
      // CPU cost under a stream of unknown ids (malformed: 29 s of 155 s profiled).
      const init: RegistryRequestInit = { headers: { "accept-encoding": "identity" } };
      return await this.#request(`schemas/ids/${id}`, init, `for schema id ${id}`, async (response) => {
        if (response.status === 404) {
          await response.body?.cancel();
          return this.#remember(id, undefined);
        }
        if (!response.ok) {
          await response.body?.cancel();
          throw new RegistryAnswerError(
            response.status,
            `schema registry answered ${response.status} for schema id ${id}`,
          );
        }
        const body = (await response.json()) as { schema?: string; schemaType?: string };
        const name =
          body.schemaType === "PROTOBUF" && body.schema ? firstMessageName(body.schema) : undefined;
        return this.#remember(id, name);
      });
    } finally {
      this.#lookupsRunning--;
      this.#lookupSlots.shift()?.();
    }
  }

  /**
   * A request to the registry (`path` under its URL), its answer read by `read` within the same
   * attempt's time limit; an attempt that got no answer (timed out, refused or reset) or a server
   * error (5xx) is tried again, the registry refusing the request (another RegistryAnswerError:
   * credentials, a wrong URL, an invalid schema) is not. `what` names the request in errors.
   */
  async #request<T>(
    path: string,
    init: RegistryRequestInit,
    what: string,
    read: (response: Response) => Promise<T>,
  ): Promise<T> {
    const url = new URL(path, withSlash(this.#options.url));
    const timeoutMs = this.#options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
    for (let attempt = 1; ; attempt++) {
      const signal = AbortSignal.timeout(timeoutMs);
      try {
        const response = await fetch(url, {
          ...init,
          headers: { ...init.headers, ...this.#authHeaders() },
          signal,
        });
        return await read(response);
      } catch (err) {
        const failure = signal.aborted
          ? new Error(`schema registry did not answer in ${timeoutMs} ms ${what}`, { cause: err })
          : err;
        if (attempt >= REQUEST_ATTEMPTS || !isWorthRetrying(failure)) throw failure;
        await sleep(REQUEST_RETRY_DELAY_MS * attempt);
      }
    }
  }

  #remember(id: number, name: string | undefined): string | undefined {
    if (name !== undefined) {
      this.#firstMessageById.set(id, name);
      return name;
    }
    this.#unknownIds.add(id);
    if (this.#unknownIds.size > MAX_UNKNOWN_IDS)
      this.#unknownIds.delete(this.#unknownIds.values().next().value!);
    return undefined;
  }

  #authHeaders(): Record<string, string> {
    const { username, password } = this.#options;
    if (username === undefined) return {};
    return { authorization: `Basic ${Buffer.from(`${username}:${password ?? ""}`).toString("base64")}` };
  }
}

const withSlash = (url: string) => (url.endsWith("/") ? url : `${url}/`);

function firstMessageName(schemaText: string): string | undefined {
  try {
    const parsed = protobuf.parse(schemaText, { keepCase: true });
    const pkg = parsed.package ?? "";
    const scope = pkg ? parsed.root.lookup(pkg) : parsed.root;
    if (!(scope instanceof protobuf.Namespace)) return undefined;
    const first = scope.nestedArray.find((n) => n instanceof protobuf.Type);
    return first ? (pkg ? `${pkg}.${first.name}` : first.name) : undefined;
  } catch {
    return undefined;
  }
}

/** A request's method, headers (the credentials are added to them) and body. */
interface RegistryRequestInit {
  readonly method?: "POST";
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** The registry answered, but not with what was asked (for a lookup: the schema or a 404). */
class RegistryAnswerError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * An attempt that got no answer (timed out, connection refused or reset) or a server error is
 * tried again; the registry refusing the request (a 4xx: credentials, a wrong URL) is not.
 */
const isWorthRetrying = (err: unknown) => !(err instanceof RegistryAnswerError) || err.status >= 500;
