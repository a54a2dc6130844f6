// The scorer's configuration: defaults < YAML file < environment < CLI flags, validated once at
// start-up. The rest of the code receives a frozen ScorerConfig and never reads process.env.
// Keys are described in configSettings.ts (sources, secrecy) and configSchema.ts (types,
// defaults); a unit test keeps the two in step.
import { readFileSync } from "node:fs";
import { parseDocument } from "yaml";
import type { z } from "zod";
import { configKeySchema, configSchema, DEV_HMAC_KEY_HEX, type ParsedConfig } from "./configSchema.js";
import { flagAttribute } from "./commandOptions.js";
import { CONFIG_SETTINGS, SETTINGS_BY_PATH, type ConfigSetting } from "./configSettings.js";
import { REDACTED, withoutUrlCredentials } from "./redaction.js";

export {
  addConfigOptions,
  CONFIG_ENV_PATHS,
  CONFIG_FLAG_PATHS,
  CONFIG_SETTINGS,
  type ConfigSetting,
} from "./configSettings.js";

// ─── The typed result ──────────────────────────────────────────────────────────────────────

export type SaslMechanism = "plain" | "scram-sha-256" | "scram-sha-512";
export type ModelProvider = "cpu" | "cuda" | "auto";
export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";

export interface KafkaSslConfig {
  readonly enabled: boolean;
  readonly caFile?: string;
  readonly certFile?: string;
  readonly keyFile?: string;
  readonly rejectUnauthorized: boolean;
}

export interface KafkaSaslConfig {
  readonly mechanism: SaslMechanism;
  readonly username: string;
  readonly password: string;
}

export interface KafkaConfig {
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly groupId: string;
  readonly transactionsTopic: string;
  readonly decisionsTopic: string;
  readonly dlqTopic: string;
  /** Where a shadow candidate's decisions go; `<decisionsTopic>.shadow` unless set. */
  readonly shadowDecisionsTopic: string;
  /** Compacted topic of model and rules promotions, read whole by every instance. */
  readonly controlTopic: string;
  /** Static membership (KIP-345); also names the transactional id in exactly-once mode. */
  readonly groupInstanceId?: string;
  readonly groupProtocol: "classic" | "consumer";
  readonly sessionTimeoutMs: number;
  /** Shortest time between two offset commits, ms (at-least-once). */
  readonly commitIntervalMs: number;
  /** Decisions, dead letters and consumed offsets in Kafka transactions. */
  readonly exactlyOnce: boolean;
  readonly ssl: KafkaSslConfig;
  /** Present only when a mechanism is configured (username and password are then required). */
  readonly sasl?: KafkaSaslConfig;
  readonly maxFrameBytes: number;
}

export interface SchemaRegistryConfig {
  readonly url: string;
  readonly username?: string;
  readonly password?: string;
}

export interface RedisTlsConfig {
  /** True for rediss:// URLs unless set explicitly. */
  readonly enabled: boolean;
  readonly caFile?: string;
}

export interface RedisConfig {
  /** With clusterNodes, only its scheme and credentials are used. */
  readonly url: string;
  /** Present when Redis is a Cluster: the seeds ioredis discovers the other nodes from. */
  readonly clusterNodes?: readonly string[];
  /** Win over the URL's user and password. */
  readonly username?: string;
  readonly password?: string;
  readonly tls: RedisTlsConfig;
  readonly namespace: string;
  readonly stateTtlMs: number;
  readonly historyLength: number;
  /** Card states kept in memory after they are written (0: none); see cachedCardStateStore.ts. */
  readonly stateCacheCards: number;
  /** Key of the HMAC-SHA256 over card-state keys and values; at least 32 bytes. */
  readonly hmacKey: Buffer;
}

export interface ModelConfig {
  /** models/<name>/<version> */
  readonly dir: string;
  readonly trustedKeysDir: string;
  readonly provider: ModelProvider;
  /** false skips the warm-up before readiness (cold-start measurements); absent means true. */
  readonly warmUp?: boolean;
}

export interface RulesConfig {
  readonly file: string;
}

export interface BreakerConfig {
  readonly errorThresholdPercentage: number;
  readonly resetTimeoutMs: number;
  readonly volumeThreshold: number;
}

export interface ScoringConfig {
  readonly budgetMs: number;
  readonly maxBatch: number;
  /** How long a batch short of maxBatch may wait for more, from its oldest transaction's arrival. */
  readonly lingerMs: number;
  readonly thresholds: { readonly review: number; readonly decline: number };
  /** Below this much remaining budget the rules decide without calling state or model. */
  readonly minBudgetForModelMs: number;
  /** Given, or a share of the budget (STAGE_TIMEOUT_SHARE). */
  readonly stateTimeoutMs: number;
  /** Given, or a share of the budget (STAGE_TIMEOUT_SHARE). */
  readonly modelTimeoutMs: number;
  readonly breaker: BreakerConfig;
  /** How many features REVIEW/DECLINE model decisions name in their reason codes. */
  readonly explainTopFeatures: number;
}

export interface OpsConfig {
  readonly httpPort: number;
  readonly httpHost: string;
  readonly logLevel: LogLevel;
}

export interface ScorerConfig {
  readonly kafka: KafkaConfig;
  readonly schemaRegistry: SchemaRegistryConfig;
  readonly redis: RedisConfig;
  readonly model: ModelConfig;
  readonly rules: RulesConfig;
  readonly scoring: ScoringConfig;
  readonly ops: OpsConfig;
  /** Development mode: allows the fixed insecure HMAC key. */
  readonly dev: boolean;
  readonly configFile?: string;
  /** Things start-up should log once a logger exists (config is loaded before it). */
  readonly warnings: readonly string[];
}

/** Share of the budget given to each state-store or model call when no timeout is set. */
export const STAGE_TIMEOUT_SHARE = 0.2;

// ─── Loading ───────────────────────────────────────────────────────────────────────────────

export interface ConfigProblem {
  /** Dotted config path, e.g. "scoring.budgetMs". */
  readonly path: string;
  /** Where the offending value came from, e.g. "env BUDGET_MS", "flag --budget-ms". */
  readonly origin?: string;
  /** The offending value as text; never given for secrets. */
  readonly received?: string;
  readonly message: string;
}

export class ConfigError extends Error {
  readonly problems: readonly ConfigProblem[];

  constructor(problems: readonly ConfigProblem[]) {
    const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
    super(
      [`invalid configuration (${count}):`, ...problems.map((p) => `  - ${describeProblem(p)}`)].join("\n"),
    );
    this.name = "ConfigError";
    this.problems = problems;
  }
}

const describeProblem = ({ path, origin, received, message }: ConfigProblem) =>
  `${path}${received === undefined ? "" : ` = ${received}`}${origin === undefined ? "" : ` (from ${origin})`}: ${message}`;

export interface LoadConfigOptions {
  /** Parsed CLI options: commander's opts() (camelCase) or flag names (kebab-case). */
  readonly argvFlags: Record<string, unknown>;
  readonly env: NodeJS.ProcessEnv;
  /** Overrides --config and FRAUD_SCORER_CONFIG. */
  readonly configFile?: string;
}

interface Sourced {
  readonly value: unknown;
  readonly origin: string;
}
type Layer = Map<string, Sourced>;

export function loadConfig({ argvFlags, env, configFile }: LoadConfigOptions): ScorerConfig {
  const fromEnv = envLayer(env);
  const fromFlags = flagLayer(argvFlags);
  const problems: ConfigProblem[] = [];
  const fileSource: Sourced | undefined =
    configFile !== undefined
      ? { value: configFile, origin: "loadConfig option" }
      : (fromFlags.get("configFile") ?? fromEnv.get("configFile"));
  const fromFile =
    typeof fileSource?.value === "string" && fileSource.value.trim() !== ""
      ? fileLayer(fileSource.value.trim(), problems)
      : new Map<string, Sourced>();

  const merged: Layer = new Map([...fromFile, ...fromEnv, ...fromFlags]);
  if (fileSource !== undefined) merged.set("configFile", fileSource);
  const warnings = applyDevMode(merged);

  const parsed = configSchema.safeParse(unflatten(merged));
  if (!parsed.success) problems.push(...parsed.error.issues.map((issue) => toProblem(issue, merged)));
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems.sort(bySettingOrder));
  return deepFreeze(toScorerConfig(parsed.data, warnings));
}

const settingIndex = (path: string) => {
  const i = CONFIG_SETTINGS.findIndex((s) => s.path === path);
  return i < 0 ? CONFIG_SETTINGS.length : i;
};
const bySettingOrder = (a: ConfigProblem, b: ConfigProblem) => settingIndex(a.path) - settingIndex(b.path);

function envLayer(env: NodeJS.ProcessEnv): Layer {
  const layer: Layer = new Map();
  for (const s of CONFIG_SETTINGS) {
    if (s.env === undefined) continue;
    const value = env[s.env];
    // An empty variable counts as unset: compose files and shells leave them behind.
    if (value !== undefined && value.trim() !== "") layer.set(s.path, { value, origin: `env ${s.env}` });
  }
  return layer;
}

function flagLayer(flags: Record<string, unknown>): Layer {
  const layer: Layer = new Map();
  for (const s of CONFIG_SETTINGS) {
    if (s.flag === undefined) continue;
    const value = flags[flagAttribute(s.flag)] ?? flags[s.flag];
    if (value !== undefined) layer.set(s.path, { value, origin: `flag --${s.flag}` });
  }
  return layer;
}

const isMapping = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !Buffer.isBuffer(v);

const isSection = (path: string) => CONFIG_SETTINGS.some((s) => s.path.startsWith(`${path}.`));

/** "budget_ms" or "budget-ms" finds budgetMs: a hint for the commonest file mistake. */
const normalizedKey = (key: string) => key.toLowerCase().replace(/[-_]/g, "");
const suggestionFor = (path: string): string | undefined => {
  const dot = path.lastIndexOf(".");
  const parent = dot < 0 ? "" : path.slice(0, dot + 1);
  const wanted = normalizedKey(path.slice(dot + 1));
  return CONFIG_SETTINGS.map((s) => s.path)
    .filter((p) => p.startsWith(parent))
    .map((p) => parent + p.slice(parent.length).split(".")[0]!)
    .find((p) => normalizedKey(p.slice(parent.length)) === wanted);
};

/** Reads the YAML file; throws when it cannot be read or parsed, collects key problems. */
function fileLayer(file: string, problems: ConfigProblem[]): Layer {
  const origin = `file ${file}`;
  const unusable = (message: string) => new ConfigError([{ path: "configFile", origin, message }]);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw unusable(`cannot be read: ${(err as Error).message}`);
  }
  const doc = parseDocument(text, { prettyErrors: true });
  // A file that cannot be parsed would turn every key it sets into a false "required".
  if (doc.errors.length > 0)
    throw unusable(`is not valid YAML: ${doc.errors.map((e) => e.message).join("; ")}`);
  const content: unknown = doc.toJS();
  if (content === null || content === undefined) return new Map();
  if (!isMapping(content)) throw unusable("expected a YAML mapping at the top level");

  const layer: Layer = new Map();
  const walk = (node: Record<string, unknown>, prefix: string) => {
    for (const [key, value] of Object.entries(node)) {
      const path = prefix === "" ? key : `${prefix}.${key}`;
      const known = SETTINGS_BY_PATH.get(path);
      if (value === null || value === undefined) continue; // `key:` with nothing after it
      if (known?.notInFile) {
        problems.push({
          path,
          origin,
          message: `cannot be set in the config file; use ${whereToSet(known, false)}`,
        });
      } else if (known !== undefined) {
        layer.set(path, { value, origin });
      } else if (isSection(path)) {
        if (isMapping(value)) walk(value, path);
        else problems.push({ path, origin, message: "expected a mapping of keys" });
      } else {
        const hint = suggestionFor(path);
        problems.push({
          path,
          origin,
          message: `unknown key${hint === undefined ? "" : `; did you mean ${hint}?`}`,
        });
      }
    }
  };
  walk(content, "");
  return layer;
}

function applyDevMode(merged: Layer): string[] {
  const dev = configKeySchema("dev")?.safeParse(merged.get("dev")?.value);
  if (dev?.success !== true || dev.data !== true) return [];
  const warnings = ["development mode (--dev / FRAUD_SCORER_DEV): not for production"];
  if (!merged.has("redis.hmacKey")) {
    merged.set("redis.hmacKey", { value: DEV_HMAC_KEY_HEX, origin: "the development default" });
    warnings.push("card state is signed with the fixed insecure development HMAC key; set STATE_HMAC_KEY");
  }
  return warnings;
}

function unflatten(layer: Layer): Record<string, unknown> {
  // Every section exists, so a missing section reads as missing keys, not a missing object.
  const root: Record<string, unknown> = {};
  const sectionAt = (path: string[]) => {
    let node = root;
    for (const key of path) node = (node[key] ??= {}) as Record<string, unknown>;
    return node;
  };
  for (const s of CONFIG_SETTINGS) sectionAt(s.path.split(".").slice(0, -1));
  for (const [path, { value }] of layer) {
    const keys = path.split(".");
    sectionAt(keys.slice(0, -1))[keys.at(-1)!] = value;
  }
  return root;
}

const whereToSet = (s: ConfigSetting, withFile = true) => {
  const ways = [
    s.env,
    s.flag === undefined ? undefined : `--${s.flag}`,
    withFile && !s.notInFile ? `${s.path} in the config file` : undefined,
  ].filter((w) => w !== undefined);
  return ways.length > 1 ? `${ways.slice(0, -1).join(", ")} or ${ways.at(-1)}` : (ways[0] ?? "");
};

const MAX_SHOWN = 80;
function showValue(value: unknown): string {
  const shown =
    JSON.stringify(typeof value === "string" ? withoutUrlCredentials(value) : value) ?? String(value);
  return shown.length > MAX_SHOWN ? `${shown.slice(0, MAX_SHOWN - 1)}…` : shown;
}

function toProblem(issue: z.core.$ZodIssue, merged: Layer): ConfigProblem {
  const keys = issue.path.map(String);
  // An issue inside a key's value (kafka.brokers.1) is reported against the key.
  let path = keys.join(".");
  for (let n = keys.length; n > 0; n--) {
    const candidate = keys.slice(0, n).join(".");
    if (SETTINGS_BY_PATH.has(candidate)) {
      path = candidate;
      break;
    }
  }
  const s = SETTINGS_BY_PATH.get(path);
  const source = merged.get(path);
  if (source === undefined)
    return issue.code === "custom" || s === undefined
      ? { path, message: issue.message }
      : { path, message: `required, ${issue.message}; set ${whereToSet(s)}` };
  return {
    path,
    origin: source.origin,
    ...(s?.secret ? {} : { received: showValue(source.value) }),
    message: issue.message,
  };
}

/** The shadow decisions topic that goes with a decisions topic, unless configured otherwise. */
export const shadowTopicOf = (decisionsTopic: string): string => `${decisionsTopic}.shadow`;

function toScorerConfig(c: ParsedConfig, warnings: string[]): ScorerConfig {
  const { sasl } = c.kafka;
  const share = (ms: number) => Math.max(1, Math.round(ms * STAGE_TIMEOUT_SHARE));
  return {
    ...c,
    kafka: {
      ...c.kafka,
      shadowDecisionsTopic: c.kafka.shadowDecisionsTopic ?? shadowTopicOf(c.kafka.decisionsTopic),
      // The schema's cross-key check guarantees both when a mechanism is set.
      sasl:
        sasl.mechanism === undefined
          ? undefined
          : { mechanism: sasl.mechanism, username: sasl.username!, password: sasl.password! },
    },
    redis: {
      ...c.redis,
      tls: { ...c.redis.tls, enabled: c.redis.tls.enabled ?? c.redis.url.startsWith("rediss:") },
    },
    scoring: {
      ...c.scoring,
      stateTimeoutMs: c.scoring.stateTimeoutMs ?? share(c.scoring.budgetMs),
      modelTimeoutMs: c.scoring.modelTimeoutMs ?? share(c.scoring.budgetMs),
    },
    warnings,
  };
}

function deepFreeze<T>(value: T): T {
  // Typed arrays cannot be frozen; the HMAC key is the only one and nobody writes to it.
  if (typeof value !== "object" || value === null || ArrayBuffer.isView(value)) return value;
  for (const v of Object.values(value)) deepFreeze(v);
  return Object.freeze(value);
}

// ─── Redaction ─────────────────────────────────────────────────────────────────────────────

const SECRET_PATHS = new Set(CONFIG_SETTINGS.filter((s) => s.secret).map((s) => s.path));

export type RedactedConfig = { readonly [key: string]: unknown };

/** A copy of the config that is safe to log: secrets and URL credentials replaced. */
export function redactConfig(config: ScorerConfig): RedactedConfig {
  const redact = (value: unknown, path: string): unknown => {
    if (value === undefined) return undefined;
    if (SECRET_PATHS.has(path) || ArrayBuffer.isView(value)) return REDACTED;
    if (typeof value === "string") return withoutUrlCredentials(value);
    if (Array.isArray(value)) return value.map((v, i) => redact(v, `${path}.${i}`));
    if (isMapping(value))
      return Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, redact(v, path === "" ? k : `${path}.${k}`)]),
      );
    return value;
  };
  return redact(config, "") as RedactedConfig;
}
