// The configuration schema: every key's type, range and default, and the checks across keys.
// Env vars and flags arrive as text and the YAML file typed; the schema accepts both.
import { z } from "zod";

const NUMBER_TEXT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const TRUE_WORDS = new Set(["true", "1", "yes", "on"]);
const FALSE_WORDS = new Set(["false", "0", "no", "off"]);

const numberFromText = (v: unknown) => (typeof v === "string" && NUMBER_TEXT.test(v.trim()) ? Number(v) : v);
const booleanFromText = (v: unknown) => {
  if (typeof v !== "string") return v;
  const word = v.trim().toLowerCase();
  return TRUE_WORDS.has(word) ? true : FALSE_WORDS.has(word) ? false : v;
};
const listFromText = (v: unknown) =>
  typeof v === "string"
    ? v
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s.length > 0)
    : v;
const trimmed = (v: unknown) => (typeof v === "string" ? v.trim() : v);
const lowerCased = (v: unknown) => (typeof v === "string" ? v.trim().toLowerCase() : v);

const integer = (min: number, max: number) => {
  const error = `expected an integer from ${min} to ${max}`;
  return z.preprocess(numberFromText, z.int({ error }).min(min, { error }).max(max, { error }));
};

const probability = () => {
  const error = "expected a number strictly between 0 and 1";
  return z.preprocess(numberFromText, z.number({ error }).gt(0, { error }).lt(1, { error }));
};

const onOff = () => z.preprocess(booleanFromText, z.boolean({ error: "expected true or false" }));

const text = (error = "expected a non-empty string") =>
  z.preprocess(trimmed, z.string({ error }).min(1, { error }));

const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.preprocess(lowerCased, z.enum(values, { error: `expected one of ${values.join(", ")}` }));

const urlWith = (protocols: readonly string[], error: string) =>
  z.preprocess(
    trimmed,
    z.string({ error }).refine((s) => protocols.includes(parsedUrl(s)?.protocol ?? ""), { error }),
  );

const parsedUrl = (s: string): URL | undefined => {
  try {
    return new URL(s);
  } catch {
    return undefined;
  }
};

const HOST_PORT = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$/;
const isHostPort = (s: string) => {
  const port = Number(HOST_PORT.exec(s)?.[1] ?? 0);
  return port >= 1 && port <= 65535;
};
const HOST_PORTS_EXPECTED = "expected a comma-separated list of host:port";
/** host:port list: Kafka's bootstrap brokers, Redis Cluster's seed nodes. */
const hostPortList = z.preprocess(
  listFromText,
  z
    .array(z.string(), { error: HOST_PORTS_EXPECTED })
    .min(1, { error: HOST_PORTS_EXPECTED })
    .superRefine((brokers, ctx) => {
      for (const bad of brokers.filter((b) => !isHostPort(b)))
        ctx.addIssue({ code: "custom", message: `${HOST_PORTS_EXPECTED}; "${bad}" is not one` });
    }),
);

const KEY_BYTES = 32;
const HMAC_EXPECTED = `expected at least ${KEY_BYTES} random bytes as hex or base64 (e.g. \`openssl rand -hex 32\`)`;
const HEX = /^(?:[0-9a-fA-F]{2})+$/;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
// Hex is tried first: a hex string is also valid base64, and hex is what `openssl rand -hex` prints.
const decodeKey = (s: string): Buffer | undefined =>
  HEX.test(s) ? Buffer.from(s, "hex") : BASE64.test(s) ? Buffer.from(s, "base64") : undefined;
const hmacKey = z.preprocess(
  trimmed,
  z.string({ error: HMAC_EXPECTED }).transform((s, ctx) => {
    const key = decodeKey(s);
    if (key === undefined || key.length < KEY_BYTES) {
      const got = key === undefined ? "neither hex nor base64" : `${key.length} bytes`;
      ctx.addIssue({ code: "custom", message: `${HMAC_EXPECTED}; got ${got}` });
      return z.NEVER;
    }
    return key;
  }),
);

// Fixed so a developer's state survives restarts; refused outside dev mode.
export const DEV_HMAC_KEY_HEX = Buffer.from("fraud-scorer/dev/INSECURE/hmac-key/v1").toString("hex");

const DAY_MS = 86_400_000;
const MIB = 1024 * 1024;
// A namespace is a key prefix: no ':' (our separator) or braces (Redis Cluster hash tags).
// Kafka's group.instance.id and transactional.id are made from it: no spaces, bounded length.
const INSTANCE_ID = /^[A-Za-z0-9_.:-]{1,200}$/;
const INSTANCE_ID_EXPECTED = "expected 1 to 200 letters, digits, '_', '.', ':' or '-'";

const NAMESPACE = /^[A-Za-z0-9_.-]{1,64}$/;
const NAMESPACE_EXPECTED = "expected 1 to 64 letters, digits, '_', '.' or '-'";

const problem = (ctx: z.RefinementCtx, path: string, message: string) =>
  ctx.addIssue({ code: "custom", path: path.split("."), message });

/** Runs a cross-key check only when no issue was found at or under these paths. */
const validAt =
  (...paths: string[]) =>
  (payload: z.core.ParsePayload) =>
    !payload.issues.some((issue) => {
      const at = (issue.path ?? []).map(String).join(".");
      return paths.some((p) => at === p || at.startsWith(`${p}.`));
    });

export const configSchema = z
  .object({
    configFile: text().optional(),
    dev: onOff().default(false),
    kafka: z.object({
      brokers: hostPortList,
      clientId: text().default("fraud-scorer"),
      groupId: text().default("fraud-scorer"),
      transactionsTopic: text().default("transactions"),
      decisionsTopic: text().default("decisions"),
      dlqTopic: text().default("transactions.dlq"),
      // Defaults to `<decisionsTopic>.shadow`, resolved in toScorerConfig (it depends on that key).
      shadowDecisionsTopic: text().optional(),
      controlTopic: text().default("fraud-scorer.control"),
      groupInstanceId: z
        .preprocess(
          trimmed,
          z.string({ error: INSTANCE_ID_EXPECTED }).regex(INSTANCE_ID, { error: INSTANCE_ID_EXPECTED }),
        )
        .optional(),
      // Measured on Kafka 4.3: a SIGKILLed static member restarted at once rejoins in about
      // 0.5 s with "classic"; with "consumer" (KIP-848) the broker refuses its instance id
      // (UNRELEASED_INSTANCE_ID) until the dead member's broker-side session has expired.
      groupProtocol: oneOf(["classic", "consumer"]).default("classic"),
      // A member gone for good has its partitions moved after this long. 10 s: a heartbeat
      // every 3.3 s may be missed twice (a stalled event loop on a loaded 2-core box) before
      // a live member is thrown out; the broker's floor is 6 s. Restarts do not wait for it:
      // static membership hands a restarted instance its partitions back at once.
      sessionTimeoutMs: integer(6_000, 300_000).default(10_000),
      // Offsets of settled batches are committed together at most this often (offsetCommitter.ts):
      // one OffsetCommit request per batch was ~150 requests a second at 1,000 tx/s. A crash
      // replays at most this much more (at-least-once); Kafka's own auto-commit waits 5 s.
      commitIntervalMs: integer(0, 60_000).default(100),
      exactlyOnce: onOff().default(false),
      ssl: z.object({
        enabled: onOff().default(false),
        caFile: text("expected a file path").optional(),
        certFile: text("expected a file path").optional(),
        keyFile: text("expected a file path").optional(),
        rejectUnauthorized: onOff().default(true),
      }),
      sasl: z.object({
        mechanism: oneOf(["plain", "scram-sha-256", "scram-sha-512"]).optional(),
        username: text().optional(),
        password: text().optional(),
      }),
      maxFrameBytes: integer(1024, 64 * MIB).default(MIB),
    }),
    schemaRegistry: z.object({
      url: urlWith(["http:", "https:"], "expected an http:// or https:// URL"),
      username: text().optional(),
      password: text().optional(),
    }),
    redis: z.object({
      url: urlWith(["redis:", "rediss:"], "expected a redis:// or rediss:// URL").default(
        "redis://127.0.0.1:6379",
      ),
      clusterNodes: hostPortList.optional(),
      username: text().optional(),
      password: text().optional(),
      tls: z.object({
        enabled: onOff().optional(),
        caFile: text("expected a file path").optional(),
      }),
      namespace: z
        .preprocess(
          trimmed,
          z.string({ error: NAMESPACE_EXPECTED }).regex(NAMESPACE, { error: NAMESPACE_EXPECTED }),
        )
        .default("fs"),
      stateTtlMs: integer(60_000, 365 * DAY_MS).default(30 * DAY_MS),
      historyLength: integer(1, 1024).default(32),
      stateCacheCards: integer(0, 10_000_000).default(100_000),
      hmacKey,
    }),
    model: z.object({
      dir: text("expected the path of models/<name>/<version>"),
      trustedKeysDir: text("expected a directory path").default("models/trusted-keys"),
      provider: oneOf(["cpu", "cuda", "auto"]).default("auto"),
      // Absent means on; off only to measure what the warm-up buys (bench/, cold start).
      warmUp: onOff().optional(),
    }),
    rules: z.object({
      file: text("expected a file path").default("rules/default.yaml"),
    }),
    scoring: z.object({
      budgetMs: integer(10, 10_000).default(200),
      // 256, not 64: at 10,000 tx/s a hiccup leaves a queue that batches of 64 worked off at their
      // higher per-transaction cost and fell into rules fallbacks (10–86 % by the model in four
      // runs, 2026-12-03), batches of up to 256 did not (83–99.9 %, p99 121–194 ms in seven). At
      // low rates batches are what the linger gathers, far below either cap.
      maxBatch: integer(1, 4096).default(256),
      // From the record's timestamp (src/stream/scoringQueue.ts): what a transaction already spent
      // upstream counts, so the linger does not reach the tail. README "Why a short batch waits".
      lingerMs: integer(0, 1000).default(20),
      thresholds: z.object({
        review: probability().default(0.5),
        decline: probability().default(0.85),
      }),
      minBudgetForModelMs: integer(0, 10_000).default(40),
      stateTimeoutMs: integer(1, 10_000).optional(),
      modelTimeoutMs: integer(1, 10_000).optional(),
      breaker: z.object({
        errorThresholdPercentage: integer(1, 100).default(50),
        resetTimeoutMs: integer(100, 600_000).default(1000),
        volumeThreshold: integer(0, 100_000).default(5),
      }),
      explainTopFeatures: integer(0, 32).default(3),
    }),
    ops: z.object({
      httpPort: integer(0, 65_535).default(9464),
      httpHost: text("expected a host name or address").default("0.0.0.0"),
      logLevel: oneOf(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    }),
  })
  // Checks across keys run whenever the keys they read are valid, so one bad key does not
  // hide the other problems.
  .superRefine(
    (c, ctx) => {
      const { sasl, ssl } = c.kafka;
      if (sasl.mechanism !== undefined) {
        for (const key of ["username", "password"] as const)
          if (sasl[key] === undefined)
            problem(
              ctx,
              `kafka.sasl.${key}`,
              `required when kafka.sasl.mechanism is set (${sasl.mechanism})`,
            );
      } else if (sasl.username !== undefined || sasl.password !== undefined) {
        problem(ctx, "kafka.sasl.mechanism", "required when a SASL username or password is set");
      }
      if ((ssl.certFile === undefined) !== (ssl.keyFile === undefined))
        problem(
          ctx,
          ssl.certFile === undefined ? "kafka.ssl.certFile" : "kafka.ssl.keyFile",
          "cert and key go together",
        );
      if (!ssl.enabled && [ssl.caFile, ssl.certFile, ssl.keyFile].some((f) => f !== undefined))
        problem(ctx, "kafka.ssl.enabled", "must be true when TLS files are given");
    },
    { when: validAt("kafka.sasl", "kafka.ssl") },
  )
  .superRefine(
    ({ kafka: k }, ctx) => {
      // The transactional id comes from the instance id: without a stable one, a restarted
      // instance cannot fence its predecessor's open transaction, and read_committed readers
      // wait for that transaction to time out.
      if (k.exactlyOnce && k.groupInstanceId === undefined)
        problem(ctx, "kafka.groupInstanceId", "required when kafka.exactlyOnce is true");
    },
    { when: validAt("kafka.exactlyOnce", "kafka.groupInstanceId") },
  )
  .superRefine(
    ({ schemaRegistry: r }, ctx) => {
      if ((r.username === undefined) !== (r.password === undefined))
        problem(
          ctx,
          r.username === undefined ? "schemaRegistry.username" : "schemaRegistry.password",
          "schema registry username and password go together",
        );
    },
    { when: validAt("schemaRegistry.username", "schemaRegistry.password") },
  )
  .superRefine(
    ({ redis }, ctx) => {
      const { enabled, caFile } = redis.tls;
      if (enabled === false && redis.url.startsWith("rediss:"))
        problem(ctx, "redis.tls.enabled", "cannot be false with a rediss:// URL");
      else if (caFile !== undefined && !(enabled ?? redis.url.startsWith("rediss:")))
        problem(ctx, "redis.tls.caFile", "given without TLS: set redis.tls.enabled or use a rediss:// URL");
    },
    { when: validAt("redis.tls", "redis.url") },
  )
  .superRefine(
    ({ dev, redis }, ctx) => {
      if (!dev && redis.hmacKey.equals(Buffer.from(DEV_HMAC_KEY_HEX, "hex")))
        problem(ctx, "redis.hmacKey", "is the insecure development key; outside --dev use a random key");
    },
    { when: validAt("dev", "redis.hmacKey") },
  )
  .superRefine(
    ({ scoring: s }, ctx) => {
      if (s.thresholds.review >= s.thresholds.decline)
        problem(
          ctx,
          "scoring.thresholds.review",
          `must be below scoring.thresholds.decline (${s.thresholds.decline})`,
        );
    },
    { when: validAt("scoring.thresholds") },
  )
  .superRefine(
    ({ scoring: s }, ctx) => {
      for (const key of ["minBudgetForModelMs", "stateTimeoutMs", "modelTimeoutMs"] as const) {
        const value = s[key];
        if (value !== undefined && value >= s.budgetMs)
          problem(ctx, `scoring.${key}`, `must be below scoring.budgetMs (${s.budgetMs})`);
      }
    },
    {
      when: validAt(
        "scoring.budgetMs",
        "scoring.minBudgetForModelMs",
        "scoring.stateTimeoutMs",
        "scoring.modelTimeoutMs",
      ),
    },
  );

export type ParsedConfig = z.output<typeof configSchema>;

/** The schema of one key, for help texts and the settings/schema consistency test. */
export function configKeySchema(path: string): z.ZodType | undefined {
  let schema: z.ZodType = configSchema;
  for (const key of path.split(".")) {
    // superRefine keeps the object schema; wrappers are not used on sections.
    if (!(schema instanceof z.ZodObject)) return undefined;
    const next = (schema.shape as Record<string, z.ZodType | undefined>)[key];
    if (next === undefined) return undefined;
    schema = next;
  }
  return schema;
}

/** A key's default, or undefined when it has none. */
export const configKeyDefault = (path: string): unknown => {
  const parsed = configKeySchema(path)?.safeParse(undefined);
  return parsed?.success ? parsed.data : undefined;
};

/** Every leaf path of the schema (sections are z.object, keys are anything else). */
export function configSchemaPaths(): string[] {
  const walk = (schema: z.ZodType, prefix: string): string[] =>
    schema instanceof z.ZodObject
      ? Object.entries(schema.shape as Record<string, z.ZodType>).flatMap(([k, v]) =>
          walk(v, prefix === "" ? k : `${prefix}.${k}`),
        )
      : [prefix];
  return walk(configSchema, "");
}
