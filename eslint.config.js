import js from "@eslint/js";
import tseslint from "typescript-eslint";

// ─── Boundaries ──────────────────────────────────────────────────────────────────────────────
// The folders are the data flow (codec → ingest → features → model → scoring → stream); these
// rules keep it so. Each boundary has an id, the folders it applies to, and the import
// specifiers it forbids there. They are enforced with ESLint's own rules (no plugin, no module
// resolution: a regular expression over the specifier as written), so they cost nothing at
// lint time. `import("…")` expressions and `import("…").Type` are checked as well as
// import/export declarations.

/** The product's folders; the rest of src is the CLI and harness code. */
const PRODUCT_FOLDERS = [
  "codec",
  "ingest",
  "features",
  "state",
  "model",
  "rules",
  "scoring",
  "stream",
  "decisions",
  "replay",
  "ops",
];
const SRC_PRODUCT = PRODUCT_FOLDERS.map((name) => `src/${name}/**`);

/** A relative specifier reaching a folder of that name (one or more levels up). */
const folder = (...names) => `^(\\.\\./)+(${names.join("|")})(/|$)`;
const srcFolder = (...names) => folder(...names.map((name) => `(src/)?${name}`));
const pkg = (...names) => `^(${names.join("|")})(/|$)`;

const KAFKA_CLIENTS = pkg(
  "kafkajs",
  "@platformatic/kafka",
  "@kafkajs/[^/]+",
  "@confluentinc/kafka-javascript",
);
const REDIS_CLIENTS = pkg("ioredis", "redis", "@redis/[^/]+");
const ONNX_RUNTIME = pkg("onnxruntime-node", "onnxruntime-common", "onnxruntime-web");

/** What features and rules decide from is upstream of all of these. */
const AFTER_FEATURES = ["model", "scoring", "state", "stream", "decisions", "replay"];

const BOUNDARIES = [
  {
    id: "src-not-offline",
    files: ["src/**"],
    forbid: folder("pipelines", "bench", "test", "chaos"),
    message: "src never imports pipelines/, bench/, chaos/ or test/ (they import src, never the reverse).",
  },
  {
    id: "product-not-harness",
    files: SRC_PRODUCT,
    forbid: srcFolder("tools", "demo", "traffic", "cli"),
    message:
      "The product never imports harness code (src/tools, demo, traffic) or the CLI; they point inward.",
  },
  {
    id: "kafka-client-in-adapter",
    files: ["src/**"],
    except: ["src/stream/kafka/**"],
    forbid: KAFKA_CLIENTS,
    message: "The Kafka client lives in src/stream/kafka/ only, and none of its types leave that folder.",
  },
  {
    id: "redis-client-in-adapter",
    files: ["src/**"],
    except: ["src/state/**"],
    forbid: REDIS_CLIENTS,
    message: "The Redis client lives in the card-state store's folder (src/state/) only.",
  },
  {
    id: "onnx-runtime-in-model",
    files: ["src/**"],
    except: ["src/model/**"],
    forbid: ONNX_RUNTIME,
    message: "ONNX Runtime lives in src/model/ only; the rest is handed a ModelRunner.",
  },
  {
    id: "codec-is-the-bottom",
    files: ["src/codec/**"],
    forbid: srcFolder(...PRODUCT_FOLDERS.filter((name) => name !== "codec")),
    message: "src/codec is the wire contract: it imports nothing else of the product.",
  },
  {
    id: "ingest-before-features",
    files: ["src/ingest/**"],
    forbid: srcFolder("features", "state", "model", "rules", "scoring", "stream", "decisions", "replay"),
    message: "src/ingest turns bytes into transactions; it knows nothing downstream of it.",
  },
  {
    id: "features-before-model-and-scoring",
    files: ["src/features/**"],
    forbid: srcFolder(...AFTER_FEATURES),
    message: "src/features is pure: it never imports the model, scoring (and its ports) or the stream.",
  },
  {
    id: "rules-beside-the-model",
    files: ["src/rules/**"],
    forbid: srcFolder(...AFTER_FEATURES),
    message: "src/rules decides from features alone: it never imports the model or scoring.",
  },
  {
    id: "model-before-scoring",
    files: ["src/model/**"],
    forbid: srcFolder("scoring", "state", "stream", "replay"),
    message: "src/model steps the LSTM; it never imports scoring, state stores or the stream.",
  },
  {
    id: "scoring-is-handed-ports",
    files: ["src/scoring/**"],
    forbid: srcFolder("stream", "state", "replay", "decisions"),
    message: "src/scoring is handed ports; it never imports the stream, the state stores or their clients.",
  },
  {
    id: "adapters-not-entry-points",
    files: ["src/state/**", "src/stream/**", "src/decisions/**", "src/ops/**"],
    forbid: srcFolder("replay"),
    message: "Adapters and ops never import the replay entry point.",
  },
  {
    id: "traffic-not-replay",
    files: ["src/tools/traffic/**"],
    forbid: srcFolder("replay"),
    message: "The load generator reads and writes transactions through src/codec, not the audit replay.",
  },
  {
    id: "bench-not-test",
    files: ["bench/**", "pipelines/**"],
    forbid: folder("test"),
    message: "bench/ and pipelines/ never import test/.",
  },
  {
    id: "pipelines-not-bench",
    files: ["pipelines/**"],
    forbid: folder("bench"),
    message: "pipelines/ never imports bench/.",
  },
];

const globToRegExp = (glob) =>
  new RegExp(
    `^${glob
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*\*/g, "\0")
      .replace(/\*/g, "[^/]*")
      .replace(/\0/g, ".*")}$`,
  );
const matchesAny = (globs, file) => (globs ?? []).some((glob) => globToRegExp(glob).test(file));
const applies = (boundary, file) => matchesAny(boundary.files, file) && !matchesAny(boundary.except, file);

// ESLint replaces (does not merge) a rule's options when several config objects set it for one
// file, so each distinct set of boundaries becomes one config object: one per folder pattern
// below.
const SCOPES = [
  "src/codec/**",
  "src/ingest/**",
  "src/features/**",
  "src/state/**",
  "src/model/**",
  "src/rules/**",
  "src/scoring/**",
  "src/stream/kafka/**",
  "src/stream/**",
  "src/decisions/**",
  "src/replay/**",
  "src/ops/**",
  "src/cli/**",
  "src/tools/traffic/**",
  "src/tools/**",
  "src/*.ts",
  "src/**", // any folder not named above still gets the rules for all of src
  "bench/**",
  "pipelines/**",
];
/** A representative path for a scope, to decide which boundaries apply to it. */
const sample = (scope) => scope.replace("**", "x/sample.ts").replace("*.ts", "sample.ts");

function boundaryRules(boundaries) {
  const patterns = boundaries.map((b) => ({ regex: b.forbid, message: `[${b.id}] ${b.message}` }));
  const dynamic = boundaries.flatMap((b) => {
    const value = `/${b.forbid.replace(/\//g, "\\/")}/`;
    const message = `[${b.id}] ${b.message}`;
    return [
      { selector: `ImportExpression > Literal.source[value=${value}]`, message },
      { selector: `TSImportType Literal[value=${value}]`, message },
    ];
  });
  return {
    "no-restricted-imports": ["error", { patterns }],
    "no-restricted-syntax": ["error", ...dynamic],
  };
}

const scopeConfigs = SCOPES.map((scope, i) => ({
  name: `boundaries: ${scope}`,
  files: [scope],
  // A narrower scope listed earlier wins: ignore here what an earlier scope already covers.
  ignores: SCOPES.slice(0, i).filter((earlier) => matchesAny([scope], sample(earlier))),
  rules: boundaryRules(BOUNDARIES.filter((b) => applies(b, sample(scope)))),
}));
export default tseslint.config(
  {
    ignores: [
      "node_modules/",
      "dist/",
      "src/codec/generated/",
      "scripts/pbjs-esm-wrapper.js",
      ".stack/",
      ".cache/",
      "models/",
      "bench/results/",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: "readonly",
        console: "readonly",
        Buffer: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        setImmediate: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
        URL: "readonly",
      },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-constant-condition": ["error", { checkLoops: false }],
    },
  },
  ...scopeConfigs,
);
