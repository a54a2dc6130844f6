// Every configuration key, described once: its path, environment variable, CLI flag, whether it
// is a secret, and its help text. Types, ranges and defaults live in configSchema.ts.
import type { Command } from "commander";
import { addCommandOptions } from "./commandOptions.js";
import { configKeyDefault } from "./configSchema.js";

export interface ConfigSetting {
  /** Dotted path in ScorerConfig and in the YAML file. */
  readonly path: string;
  readonly env?: string;
  /** Long flag name without dashes. */
  readonly flag?: string;
  /** Placeholder of the flag's value; absent for on/off switches. */
  readonly flagValue?: string;
  /** Replaced by "[redacted]" in redactConfig and never echoed in error messages. */
  readonly secret?: boolean;
  /** Keys that steer loading itself cannot come from the file. */
  readonly notInFile?: boolean;
  readonly help: string;
}

const setting = (
  path: string,
  help: string,
  more: Omit<ConfigSetting, "path" | "help"> = {},
): ConfigSetting => ({
  path,
  help,
  ...more,
});

// Secrets get no flag: command lines are visible to every user of the machine (ps).
export const CONFIG_SETTINGS: readonly ConfigSetting[] = [
  setting("configFile", "YAML configuration file", {
    env: "FRAUD_SCORER_CONFIG",
    flag: "config",
    flagValue: "file",
    notInFile: true,
  }),
  setting("dev", "development mode: allow the fixed insecure state HMAC key", {
    env: "FRAUD_SCORER_DEV",
    flag: "dev",
    notInFile: true,
  }),

  setting("kafka.brokers", "Kafka bootstrap brokers, comma-separated host:port", {
    env: "KAFKA_BROKERS",
    flag: "kafka-brokers",
    flagValue: "list",
  }),
  setting("kafka.clientId", "Kafka client id", {
    env: "KAFKA_CLIENT_ID",
    flag: "kafka-client-id",
    flagValue: "id",
  }),
  setting("kafka.groupId", "consumer group id", {
    env: "KAFKA_GROUP_ID",
    flag: "kafka-group-id",
    flagValue: "id",
  }),
  setting("kafka.transactionsTopic", "topic of incoming transactions", {
    env: "KAFKA_TRANSACTIONS_TOPIC",
    flag: "transactions-topic",
    flagValue: "topic",
  }),
  setting("kafka.decisionsTopic", "topic decisions are written to", {
    env: "KAFKA_DECISIONS_TOPIC",
    flag: "decisions-topic",
    flagValue: "topic",
  }),
  setting("kafka.dlqTopic", "dead-letter topic for undecodable records", {
    env: "KAFKA_DLQ_TOPIC",
    flag: "dlq-topic",
    flagValue: "topic",
  }),
  setting(
    "kafka.shadowDecisionsTopic",
    "topic a shadow candidate's decisions go to (default: <decisions topic>.shadow)",
    {
      env: "KAFKA_SHADOW_DECISIONS_TOPIC",
      flag: "shadow-decisions-topic",
      flagValue: "topic",
    },
  ),
  setting("kafka.controlTopic", "compacted topic of model and rules promotions (every instance reads it)", {
    env: "KAFKA_CONTROL_TOPIC",
    flag: "control-topic",
    flagValue: "topic",
  }),
  setting(
    "kafka.groupInstanceId",
    "static group membership id, stable per instance (e.g. the pod name): a restart resumes at once",
    { env: "KAFKA_GROUP_INSTANCE_ID", flag: "group-instance-id", flagValue: "id" },
  ),
  setting("kafka.groupProtocol", "consumer group protocol: classic or consumer (KIP-848)", {
    env: "KAFKA_GROUP_PROTOCOL",
    flag: "group-protocol",
    flagValue: "name",
  }),
  setting("kafka.sessionTimeoutMs", "how long a silent member keeps its partitions (classic protocol), ms", {
    env: "KAFKA_SESSION_TIMEOUT_MS",
  }),
  setting(
    "kafka.commitIntervalMs",
    "shortest time between two offset commits, ms (at-least-once; a crash replays at most this much more)",
    { env: "KAFKA_COMMIT_INTERVAL_MS" },
  ),
  setting(
    "kafka.exactlyOnce",
    "decisions and consumed offsets in Kafka transactions (readers use read_committed)",
    { env: "KAFKA_EXACTLY_ONCE", flag: "exactly-once" },
  ),
  setting("kafka.ssl.enabled", "TLS to the brokers", { env: "KAFKA_SSL", flag: "kafka-ssl" }),
  setting("kafka.ssl.caFile", "PEM file of the CA that signed the brokers' certificates", {
    env: "KAFKA_SSL_CA_FILE",
  }),
  setting("kafka.ssl.certFile", "PEM client certificate (mutual TLS)", { env: "KAFKA_SSL_CERT_FILE" }),
  setting("kafka.ssl.keyFile", "PEM client key (mutual TLS)", { env: "KAFKA_SSL_KEY_FILE", secret: true }),
  setting("kafka.ssl.rejectUnauthorized", "verify the brokers' certificates", {
    env: "KAFKA_SSL_REJECT_UNAUTHORIZED",
  }),
  setting("kafka.sasl.mechanism", "SASL mechanism: plain, scram-sha-256 or scram-sha-512", {
    env: "KAFKA_SASL_MECHANISM",
  }),
  setting("kafka.sasl.username", "SASL username", { env: "KAFKA_SASL_USERNAME" }),
  setting("kafka.sasl.password", "SASL password", { env: "KAFKA_SASL_PASSWORD", secret: true }),
  setting("kafka.maxFrameBytes", "largest accepted Protobuf frame, bytes", { env: "KAFKA_MAX_FRAME_BYTES" }),

  setting("schemaRegistry.url", "Confluent-compatible schema registry URL", {
    env: "SCHEMA_REGISTRY_URL",
    flag: "schema-registry-url",
    flagValue: "url",
  }),
  setting("schemaRegistry.username", "schema registry basic-auth user", { env: "SCHEMA_REGISTRY_USERNAME" }),
  setting("schemaRegistry.password", "schema registry basic-auth password", {
    env: "SCHEMA_REGISTRY_PASSWORD",
    secret: true,
  }),

  setting("redis.url", "Redis URL (rediss:// for TLS)", {
    env: "REDIS_URL",
    flag: "redis-url",
    flagValue: "url",
  }),
  setting(
    "redis.clusterNodes",
    "Redis Cluster seed nodes, comma-separated host:port (the URL's host is then unused)",
    {
      env: "REDIS_CLUSTER_NODES",
      flag: "redis-cluster-nodes",
      flagValue: "list",
    },
  ),
  setting("redis.username", "Redis ACL user (wins over the URL's)", { env: "REDIS_USERNAME" }),
  setting("redis.password", "Redis password (wins over the URL's)", { env: "REDIS_PASSWORD", secret: true }),
  setting("redis.tls.enabled", "TLS to Redis (default: on for rediss://)", { env: "REDIS_TLS" }),
  setting("redis.tls.caFile", "PEM file of the CA that signed the Redis servers' certificates", {
    env: "REDIS_TLS_CA_FILE",
  }),
  setting("redis.namespace", "prefix of every card-state key", { env: "REDIS_NAMESPACE" }),
  setting("redis.stateTtlMs", "card-state time to live, ms", { env: "STATE_TTL_MS" }),
  setting("redis.historyLength", "transactions kept per card for state rebuilds", {
    env: "STATE_HISTORY_LENGTH",
  }),
  setting("redis.stateCacheCards", "card states kept in memory after they are written (0: none)", {
    env: "STATE_CACHE_CARDS",
  }),
  setting("redis.hmacKey", "card-state HMAC key, hex or base64, at least 32 bytes", {
    env: "STATE_HMAC_KEY",
    secret: true,
  }),

  setting("model.dir", "model artifact directory, models/<name>/<version>", {
    env: "MODEL_DIR",
    flag: "model-dir",
    flagValue: "dir",
  }),
  setting("model.trustedKeysDir", "directory of trusted ed25519 public keys", {
    env: "MODEL_TRUSTED_KEYS_DIR",
    flag: "trusted-keys-dir",
    flagValue: "dir",
  }),
  setting("model.provider", "ONNX execution provider: cpu, cuda or auto", {
    env: "MODEL_PROVIDER",
    flag: "provider",
    flagValue: "name",
  }),

  setting("model.warmUp", "step the model a few times before reporting ready (default: true)", {
    env: "MODEL_WARM_UP",
  }),

  setting("rules.file", "rule set (YAML)", { env: "RULES_FILE", flag: "rules-file", flagValue: "file" }),

  setting("scoring.budgetMs", "per-transaction budget, record timestamp to acknowledged decision, ms", {
    env: "BUDGET_MS",
    flag: "budget-ms",
    flagValue: "ms",
  }),
  setting("scoring.maxBatch", "largest scoring batch", {
    env: "MAX_BATCH",
    flag: "max-batch",
    flagValue: "n",
  }),
  setting(
    "scoring.lingerMs",
    "how old (from its record's timestamp; at most this long after arrival) the oldest transaction of a short scoring batch may get before the batch goes, ms (not in exactly-once mode)",
    {
      env: "BATCH_LINGER_MS",
    },
  ),
  setting("scoring.thresholds.review", "score from which a transaction is sent to review", {
    env: "REVIEW_THRESHOLD",
    flag: "review-threshold",
    flagValue: "score",
  }),
  setting("scoring.thresholds.decline", "score from which a transaction is declined", {
    env: "DECLINE_THRESHOLD",
    flag: "decline-threshold",
    flagValue: "score",
  }),
  setting("scoring.minBudgetForModelMs", "below this remaining budget the rules decide, ms", {
    env: "MIN_BUDGET_FOR_MODEL_MS",
  }),
  setting(
    "scoring.stateTimeoutMs",
    "state-store call timeout where no transaction budget bounds it, ms (default: 20 % of the budget); a scoring call gets what its budget has left",
    {
      env: "STATE_TIMEOUT_MS",
    },
  ),
  setting(
    "scoring.modelTimeoutMs",
    "model call timeout where no transaction budget bounds it, ms (default: 20 % of the budget); a scoring call gets what its budget has left",
    {
      env: "MODEL_TIMEOUT_MS",
    },
  ),
  setting("scoring.breaker.errorThresholdPercentage", "failure percentage that opens a breaker", {
    env: "BREAKER_ERROR_THRESHOLD_PERCENTAGE",
  }),
  setting("scoring.breaker.resetTimeoutMs", "how long a breaker stays open before a trial call, ms", {
    env: "BREAKER_RESET_TIMEOUT_MS",
  }),
  setting("scoring.breaker.volumeThreshold", "calls in the window before a breaker may open", {
    env: "BREAKER_VOLUME_THRESHOLD",
  }),
  setting("scoring.explainTopFeatures", "features named in reason codes of model REVIEW/DECLINE decisions", {
    env: "EXPLAIN_TOP_FEATURES",
  }),

  setting("ops.httpPort", "health and metrics port (0 = any free port)", {
    env: "HTTP_PORT",
    flag: "http-port",
    flagValue: "port",
  }),
  setting("ops.httpHost", "health and metrics interface", {
    env: "HTTP_HOST",
    flag: "http-host",
    flagValue: "host",
  }),
  setting("ops.logLevel", "fatal, error, warn, info, debug, trace or silent", {
    env: "LOG_LEVEL",
    flag: "log-level",
    flagValue: "level",
  }),
];

export const SETTINGS_BY_PATH: ReadonlyMap<string, ConfigSetting> = new Map(
  CONFIG_SETTINGS.map((s) => [s.path, s]),
);

/** Flag name (without dashes) → config path. */
export const CONFIG_FLAG_PATHS: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(CONFIG_SETTINGS.flatMap((s) => (s.flag === undefined ? [] : [[s.flag, s.path]]))),
);

/** Environment variable → config path. */
export const CONFIG_ENV_PATHS: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(CONFIG_SETTINGS.flatMap((s) => (s.env === undefined ? [] : [[s.env, s.path]]))),
);

/** Declares every config flag on a command; values stay strings, loadConfig validates them. */
export function addConfigOptions(command: Command): Command {
  const flagged = CONFIG_SETTINGS.flatMap((s) =>
    s.flag === undefined ? [] : [{ ...s, key: s.path, flag: s.flag }],
  );
  // The defaults come from the schema when the config is loaded; help only shows them.
  return addCommandOptions(command, flagged, (o) => {
    const fallback = configKeyDefault(o.key!);
    return fallback === undefined ? undefined : JSON.stringify(fallback);
  });
}
