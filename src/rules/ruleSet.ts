// Rule files (YAML or JSON) are validated once with zod and compiled into plain closures, so
// evaluating a rule set per transaction interprets nothing. A file that is not valid — YAML syntax,
// schema, an unknown fact, a fact compared with the wrong type, a repeated id — is refused whole,
// every problem named with its line and column, so a bad rule set never half-applies. Facts a rule may name: every
// feature (raw, analyst units; see featureVector.ts) plus a few transaction fields.
import { readFile } from "node:fs/promises";
import { z } from "zod";
import type { fraud } from "../codec/generated/fraud.js";
import { FEATURE_NAMES, rawFeatureReader, type RawFeatures } from "../features/featureVector.js";
import {
  formatYamlProblem,
  pathText,
  validateYaml,
  type YamlLocator,
  type YamlProblem,
} from "../ops/validatedYaml.js";

export type RuleEffect = "decline" | "review" | "allow" | "score";

/** Transaction fields rules can test directly, besides the features. */
export const TRANSACTION_FACTS = {
  mcc: "number",
  channel: "string", // card_present | contactless | ecommerce | atm | moto | recurring | unspecified
  merchant_country: "string",
  card_country: "string",
  currency: "string",
} as const;

type FactKind = "number" | "string";
const FACT_KINDS: ReadonlyMap<string, FactKind> = new Map<string, FactKind>([
  ...FEATURE_NAMES.map((n): [string, FactKind] => [n, "number"]),
  ...Object.entries(TRANSACTION_FACTS),
]);

/**
 * What a rule reads: the transaction's own fields and its raw features by index. A fact whose
 * source was unavailable (no card state in fallback) is unknown, not zero. Each condition is
 * compiled to read its fact directly (an index, a field): building a named-facts object per
 * transaction and reading it by name (megamorphic keyed loads and stores) was most of the rules'
 * cost.
 */
export interface RuleFacts {
  readonly tx: fraud.v1.ITransaction;
  readonly features: RawFeatures;
}

const CHANNEL_NAMES = ["unspecified", "card_present", "contactless", "ecommerce", "atm", "moto", "recurring"];

type FactReader = (f: RuleFacts) => Scalar | undefined;

const TRANSACTION_FACT_READERS: Readonly<Record<keyof typeof TRANSACTION_FACTS, FactReader>> = {
  mcc: ({ tx }) => tx.mcc ?? 0,
  channel: ({ tx }) => CHANNEL_NAMES[tx.channel ?? 0] ?? "unspecified",
  merchant_country: ({ tx }) => tx.merchantCountry ?? "",
  card_country: ({ tx }) => tx.cardCountry ?? "",
  currency: ({ tx }) => tx.currency ?? "",
};

/** How a rule reads a known fact (FACT_KINDS has it). */
function factReader(fact: string): FactReader {
  if (Object.hasOwn(TRANSACTION_FACT_READERS, fact))
    return TRANSACTION_FACT_READERS[fact as keyof typeof TRANSACTION_FACTS];
  const read = rawFeatureReader(fact)!;
  return ({ features }) => read(features);
}

const comparisonOps = ["eq", "ne", "gt", "gte", "lt", "lte"] as const;
const setOps = ["in", "not_in"] as const;
type Scalar = number | string;

export type ConditionSpec =
  | { fact: string; op: (typeof comparisonOps)[number]; value: Scalar }
  | { fact: string; op: (typeof setOps)[number]; values: Scalar[] }
  | { all: ConditionSpec[] }
  | { any: ConditionSpec[] }
  | { not: ConditionSpec };

const scalar = z.union([z.number(), z.string()]);
const conditionSchema: z.ZodType<ConditionSpec> = z.lazy(() =>
  z.union([
    z.strictObject({ fact: z.string(), op: z.enum(comparisonOps), value: scalar }),
    z.strictObject({ fact: z.string(), op: z.enum(setOps), values: z.array(scalar).min(1) }),
    z.strictObject({ all: z.array(conditionSchema).min(1) }),
    z.strictObject({ any: z.array(conditionSchema).min(1) }),
    z.strictObject({ not: conditionSchema }),
  ]),
);

const ruleSchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, "ids are lower-case kebab-case"),
  description: z.string().optional(),
  effect: z.enum(["decline", "review", "allow", "score"]),
  /** decline/review/score: contribution to the fallback score; allow: cap on it. */
  score: z.number().min(0).max(1),
  when: conditionSchema,
});

export const ruleSetSchema = z.strictObject({
  version: z.string().min(1),
  description: z.string().optional(),
  rules: z.array(ruleSchema).min(1),
});

export type RuleSetSpec = z.infer<typeof ruleSetSchema>;

/** Three-valued: `null` when the condition depends on an unknown fact. */
export type CompiledCondition = (facts: RuleFacts) => boolean | null;

export interface CompiledRule {
  readonly id: string;
  readonly effect: RuleEffect;
  readonly score: number;
  readonly test: CompiledCondition;
}

export interface RuleSet {
  readonly version: string;
  readonly rules: readonly CompiledRule[];
  /** Facts some rule reads: the caller can skip computing the rest. */
  readonly factsUsed: ReadonlySet<string>;
}

export class RuleSetError extends Error {
  override readonly name = "RuleSetError";
  readonly kind = "invalid_rule_set";
  /** One line per problem: `<source>:<line>:<column>: <path>: <reason>`. */
  readonly issues: readonly string[];
  constructor(
    readonly source: string,
    readonly problems: readonly YamlProblem[],
  ) {
    const issues = problems.map((p) => formatYamlProblem(source, p));
    super(`invalid rule set ${source}:\n  ${issues.join("\n  ")}`);
    this.issues = issues;
  }
}

type Path = (string | number)[];
interface CompileIssue {
  readonly path: Path;
  readonly message: string;
}

function compileCondition(
  spec: ConditionSpec,
  where: Path,
  issues: CompileIssue[],
  used: Set<string>,
): CompiledCondition {
  if ("all" in spec) {
    const parts = spec.all.map((c, i) => compileCondition(c, [...where, "all", i], issues, used));
    return (f) => {
      let unknown = false;
      for (const p of parts) {
        const r = p(f);
        if (r === false) return false;
        if (r === null) unknown = true;
      }
      return unknown ? null : true;
    };
  }
  if ("any" in spec) {
    const parts = spec.any.map((c, i) => compileCondition(c, [...where, "any", i], issues, used));
    return (f) => {
      let unknown = false;
      for (const p of parts) {
        const r = p(f);
        if (r === true) return true;
        if (r === null) unknown = true;
      }
      return unknown ? null : false;
    };
  }
  if ("not" in spec) {
    const inner = compileCondition(spec.not, [...where, "not"], issues, used);
    return (f) => {
      const r = inner(f);
      return r === null ? null : !r;
    };
  }
  const { fact } = spec;
  const kind = FACT_KINDS.get(fact);
  if (kind === undefined) {
    issues.push({ path: [...where, "fact"], message: `unknown fact "${fact}"` });
    return () => null;
  }
  used.add(fact);
  const values: Scalar[] = "values" in spec ? spec.values : "value" in spec ? [spec.value] : [];
  values.forEach((v, i) => {
    if (typeof v !== kind)
      issues.push({
        path: "values" in spec ? [...where, "values", i] : [...where, "value"],
        message: `fact "${fact}" is a ${kind}, compared with ${JSON.stringify(v)}`,
      });
  });
  const read = factReader(fact);
  if ("values" in spec) {
    const set = new Set<Scalar>(spec.values);
    const wanted = spec.op === "in";
    return (f) => {
      const x = read(f);
      return x === undefined ? null : set.has(x) === wanted;
    };
  }
  const v = spec.value;
  const compare = (test: (x: Scalar) => boolean): CompiledCondition => {
    return (f) => {
      const x = read(f);
      return x === undefined ? null : test(x);
    };
  };
  switch (spec.op) {
    case "eq":
      return compare((x) => x === v);
    case "ne":
      return compare((x) => x !== v);
    case "gt":
      return compare((x) => x > v);
    case "gte":
      return compare((x) => x >= v);
    case "lt":
      return compare((x) => x < v);
    case "lte":
      return compare((x) => x <= v);
  }
}

const NOWHERE: YamlLocator = () => ({ line: 0, column: 0 });

/** Compiles an already-parsed rule set; `locate` places problems in the file it came from. */
export function compileRuleSet(input: unknown, source = "<inline>", locate: YamlLocator = NOWHERE): RuleSet {
  const parsed = ruleSetSchema.safeParse(input);
  if (!parsed.success) {
    throw new RuleSetError(
      source,
      parsed.error.issues.map((i) => ({ ...locate(i.path), path: pathText(i.path), message: i.message })),
    );
  }
  const issues: CompileIssue[] = [];
  const used = new Set<string>();
  const seen = new Set<string>();
  const rules = parsed.data.rules.map((r, i): CompiledRule => {
    if (seen.has(r.id)) issues.push({ path: ["rules", i, "id"], message: `duplicate id "${r.id}"` });
    seen.add(r.id);
    return {
      id: r.id,
      effect: r.effect,
      score: r.score,
      test: compileCondition(r.when, ["rules", i, "when"], issues, used),
    };
  });
  if (issues.length > 0) {
    throw new RuleSetError(
      source,
      issues.map((i) => ({ ...locate(i.path), path: pathText(i.path), message: i.message })),
    );
  }
  return { version: parsed.data.version, rules, factsUsed: used };
}

/** Parses YAML (JSON is YAML) text into a compiled rule set, or throws RuleSetError with lines. */
export function parseRuleSet(text: string, source = "<inline>"): RuleSet {
  // The schema is applied by compileRuleSet; here only the YAML syntax and the node positions.
  const parsed = validateYaml(text, z.unknown());
  if (!parsed.ok) throw new RuleSetError(source, parsed.problems);
  return compileRuleSet(parsed.value, source, parsed.locate);
}

export const DEFAULT_RULES_PATH = new URL("../../rules/default.yaml", import.meta.url);

export async function loadRuleSet(path: string | URL = DEFAULT_RULES_PATH): Promise<RuleSet> {
  return parseRuleSet(await readFile(path, "utf8"), String(path));
}
