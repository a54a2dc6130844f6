import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { fraud } from "../../src/codec/generated/fraud.js";
import { computeFeatureHashes } from "../../src/ingest/featureHashes.js";
import { advanceCardState, emptyCardState, type CardState } from "../../src/features/cardState.js";
import { computeRawFeatures } from "../../src/features/featureVector.js";
import { evaluateRules } from "../../src/rules/evaluateRules.js";
import { loadRuleSet, parseRuleSet, RuleSetError } from "../../src/rules/ruleSet.js";

const T0 = Date.UTC(2025, 2, 3, 10);
const tx = (over: Partial<fraud.v1.ITransaction> = {}): fraud.v1.ITransaction => ({
  transactionId: "t",
  cardId: "c",
  amountMinor: 4_000,
  currency: "EUR",
  merchantId: "m",
  mcc: 5411,
  merchantCountry: "FR",
  cardCountry: "FR",
  channel: fraud.v1.Channel.CHANNEL_ECOMMERCE,
  deviceId: "phone",
  eventTimeMs: T0,
  ...over,
});

const input = (t: fraud.v1.ITransaction, state: CardState | null, deviceCards: number | null = 1) => {
  const hashes = computeFeatureHashes(t);
  const shared = deviceCards === null ? null : { deviceCardCount24h: deviceCards };
  return { tx: t, features: computeRawFeatures(t, hashes, state, shared) };
};

const ids = (o: { fired: { id: string }[] }) => o.fired.map((f) => f.id);

describe("default rule set", () => {
  it("declines a large charge that follows a burst of tiny test charges", async () => {
    const rules = await loadRuleSet();
    let state = emptyCardState(0);
    for (let i = 0; i < 4; i++) {
      const t = tx({ amountMinor: 99, merchantId: `tester-${i}`, eventTimeMs: T0 + i * 60_000 });
      state = advanceCardState(state, t, computeFeatureHashes(t));
    }
    const outcome = evaluateRules(
      rules,
      input(tx({ amountMinor: 45_000, merchantId: "big", eventTimeMs: T0 + 300_000 }), state),
    );
    expect(ids(outcome)).toContain("card-testing-cashout");
    expect(outcome.fired.find((f) => f.id === "card-testing-cashout")?.effect).toBe("decline");
    expect(outcome.score).toBeGreaterThanOrEqual(0.9);
  });

  it("still flags a foreign high amount when card state is missing, without firing state rules", async () => {
    const rules = await loadRuleSet();
    const outcome = evaluateRules(
      rules,
      input(tx({ amountMinor: 120_000, merchantCountry: "US" }), null, null),
    );
    expect(ids(outcome)).toEqual(["foreign-high-amount"]);
    expect(outcome.score).toBeCloseTo(0.4, 6);
  });

  it("scores an everyday domestic purchase at zero", async () => {
    const rules = await loadRuleSet();
    const t = tx();
    const state = advanceCardState(emptyCardState(0), t, computeFeatureHashes(t));
    expect(evaluateRules(rules, input(tx({ eventTimeMs: T0 + 86_400_000 }), state))).toEqual({
      score: 0,
      fired: [],
    });
  });

  it("carries a version", async () => {
    expect((await loadRuleSet()).version).toMatch(/\S/);
  });
});

describe("rule compilation", () => {
  it("rejects a rule naming an unknown fact, naming the fact", () => {
    const text = `version: x\nrules:\n  - { id: a, effect: review, score: 0.5, when: { fact: amount_usd, op: gt, value: 1 } }\n`;
    expect(() => parseRuleSet(text, "bad.yaml")).toThrow(RuleSetError);
    expect(() => parseRuleSet(text, "bad.yaml")).toThrow(/amount_usd/);
  });

  it("rejects comparing a numeric fact with a string", () => {
    const text = `{"version":"x","rules":[{"id":"a","effect":"review","score":0.5,"when":{"fact":"amount_eur","op":"gt","value":"9"}}]}`;
    expect(() => parseRuleSet(text)).toThrow(/amount_eur/);
  });

  it("an allow rule caps the score of the rules firing with it", () => {
    const rules = parseRuleSet(`
version: x
rules:
  - { id: big, effect: review, score: 0.7, when: { fact: amount_eur, op: gte, value: 10 } }
  - { id: trusted, effect: allow, score: 0.1, when: { fact: mcc, op: in, values: [5411] } }
`);
    const outcome = evaluateRules(rules, input(tx(), null));
    expect(ids(outcome)).toEqual(["big", "trusted"]);
    expect(outcome.score).toBeCloseTo(0.1, 9);
  });

  it("a negated condition over an unknown fact does not fire", () => {
    const rules = parseRuleSet(`
version: x
rules:
  - { id: not-new, effect: score, score: 0.5, when: { not: { fact: device_new, op: eq, value: 1 } } }
`);
    expect(evaluateRules(rules, input(tx(), null)).fired).toEqual([]);
    expect(ids(evaluateRules(rules, input(tx({ deviceId: "" }), emptyCardState(0))))).toEqual(["not-new"]);
  });
});

describe("a bad rule file is refused with the line and the reason", () => {
  const refusal = (text: string): RuleSetError => {
    try {
      parseRuleSet(text, "rules.yaml");
    } catch (err) {
      if (err instanceof RuleSetError) return err;
      throw err;
    }
    throw new Error("the rule set was accepted");
  };
  const GOOD_RULE =
    "  - id: a\n    effect: review\n    score: 0.5\n    when: { fact: amount_eur, op: gt, value: 100 }\n";

  it("a YAML syntax error names its line", () => {
    const err = refusal(`version: x\nrules:\n${GOOD_RULE}  - id: b\n    when: { fact: [amount_eur\n`);
    expect(err.kind).toBe("invalid_rule_set");
    expect(err.issues[0]).toMatch(/^rules\.yaml:(8|9):\d+: /);
  });

  it("a schema error names the line of the value and its path", () => {
    const err = refusal(
      `version: x\nrules:\n${GOOD_RULE}  - id: b\n    effect: block\n    score: 0.5\n    when: { fact: amount_eur, op: gt, value: 1 }\n`,
    );
    expect(err.issues).toEqual([expect.stringMatching(/^rules\.yaml:8:13: rules\[1\]\.effect: /)]);
  });

  it("an unknown fact and a type mismatch deep in a condition name their lines", () => {
    const text = [
      "version: x",
      "rules:",
      "  - id: a",
      "    effect: decline",
      "    score: 0.9",
      "    when:",
      "      all:",
      "        - { fact: amount_eur, op: gte, value: 100 }",
      "        - any:",
      "            - { fact: amount_usd, op: gt, value: 1 }",
      '            - { fact: merchant_country, op: in, values: ["FR", 3] }',
    ].join("\n");
    const err = refusal(text);
    expect(err.issues).toEqual([
      expect.stringMatching(
        /^rules\.yaml:10:23: rules\[0\]\.when\.all\[1\]\.any\[0\]\.fact: unknown fact "amount_usd"/,
      ),
      expect.stringMatching(
        /^rules\.yaml:11:64: rules\[0\]\.when\.all\[1\]\.any\[1\]\.values\[1\]: fact "merchant_country" is a string/,
      ),
    ]);
  });

  it("a repeated rule id names the line of the second", () => {
    const err = refusal(`version: x\nrules:\n${GOOD_RULE}${GOOD_RULE}`);
    expect(err.issues).toEqual([expect.stringMatching(/^rules\.yaml:7:9: rules\[1\]\.id: duplicate id "a"/)]);
  });
});

describe("fraud-scorer rules validate", () => {
  it("accepts the default rules and refuses a bad file with its lines, exit 1", async () => {
    const run = promisify(execFile);
    const ok = await run(process.execPath, [
      "bin/fraud-scorer.js",
      "rules",
      "validate",
      "rules/default.yaml",
    ]);
    expect(ok.stdout).toMatch(/^OK rules\/default\.yaml: version \S+, \d+ rules/);
    const bad = join(await mkdtemp(join(tmpdir(), "rules-")), "bad.yaml");
    await writeFile(
      bad,
      "version: x\nrules:\n  - id: a\n    effect: review\n    score: 0.5\n    when: { fact: nope, op: gt, value: 1 }\n",
    );
    const refused = await run(process.execPath, ["bin/fraud-scorer.js", "rules", "validate", bad]).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect((refused as { code: number }).code).toBe(1);
    expect((refused as { stderr: string }).stderr).toMatch(
      /bad\.yaml:6:\d+: rules\[0\]\.when\.fact: unknown fact "nope"/,
    );
  });
});
