// Promotion without a restart, through the control channel every instance follows: a model or
// rule set promoted once reaches every instance; each verifies before switching; a tampered
// artifact or a bad rule file is refused while the current one stays; rollback returns to the
// previous model. (The Kafka binding of the channel is tested with the Kafka port.)
import { cp, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InMemoryControlChannel } from "../../src/control/controlChannel.js";
import { sha256Hex, type ControlRecord } from "../../src/control/controlRecord.js";
import { followControl } from "../../src/control/followControl.js";
import { promoteModel, promoteRules, rollbackModel } from "../../src/control/promotionRecords.js";
import { ModelSlot, type ModelRefusal } from "../../src/model/modelSlot.js";
import { loadRuleSet, RuleSetError } from "../../src/rules/ruleSet.js";
import { RuleSetSlot } from "../../src/rules/ruleSetSlot.js";
import { loadVerifiedModel, NEW_MODEL_DIR, OLD_MODEL_DIR, verifyWith } from "../support/signedModels.js";

const OLD = OLD_MODEL_DIR;
const NEW = NEW_MODEL_DIR;
const load = loadVerifiedModel;

interface Instance {
  model: ModelSlot;
  rules: RuleSetSlot;
  refusals: { kind: ModelRefusal | "rules"; reason: string }[];
  outcomes: string[];
}

const channel = new InMemoryControlChannel();
const instances: Instance[] = [];
const promoter = { channel, issuedBy: "test@ci", ...verifyWith };
let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "promotion-"));
  for (let i = 0; i < 2; i++) {
    const refusals: Instance["refusals"] = [];
    const instance: Instance = {
      model: new ModelSlot(await load(OLD), OLD, {
        load,
        retireAfterMs: 0,
        events: { refused: (kind, _dir, reason) => refusals.push({ kind, reason }) },
      }),
      rules: new RuleSetSlot(await loadRuleSet(), {
        refused: (_file, issues) => refusals.push({ kind: "rules", reason: issues.join("\n") }),
      }),
      refusals,
      outcomes: [],
    };
    await followControl(channel, {
      model: instance.model,
      rules: instance.rules,
      onOutcome: (r, outcome) => instance.outcomes.push(`${r.key}:${outcome}`),
    });
    instances.push(instance);
  }
});

afterAll(async () => {
  for (const i of instances) await i.model.current.close();
});

const versions = () => instances.map((i) => i.model.current.modelVersion);
const stepOnce = async (slot: ModelSlot) => {
  const m = slot.current;
  const out = await m.step(
    new Float32Array(m.featureCount),
    new Float32Array(m.hiddenSize),
    new Float32Array(m.hiddenSize),
    1,
  );
  return out.score[0]!;
};

describe("model promotion", () => {
  it("switches every instance to a promoted, verified artifact", async () => {
    const record = await promoteModel(NEW, promoter);
    expect(record.modelVersion).toBe("1.1.0");
    expect(record.previous).toBeUndefined();
    expect(versions()).toEqual(["1.1.0", "1.1.0"]);
    expect(await stepOnce(instances[0]!.model)).toBeGreaterThan(0);
  });

  it("refuses a tampered artifact on every instance and keeps scoring with the current model", async () => {
    const tampered = join(work, "tampered");
    await cp(OLD, tampered, { recursive: true });
    const onnx = await readFile(join(tampered, "model.onnx"));
    onnx[onnx.length - 10]! ^= 0xff;
    await writeFile(join(tampered, "model.onnx"), onnx);
    // promote refuses it before publishing ...
    await expect(promoteModel(tampered, promoter)).rejects.toThrow(/sha256/);
    // ... and an instance refuses a record for it that bypassed the CLI.
    const forged: ControlRecord = {
      key: "model",
      dir: tampered,
      modelVersion: "1.0.0",
      manifestSha256: sha256Hex(await readFile(join(tampered, "manifest.json"))),
      issuedAt: new Date().toISOString(),
      issuedBy: "mallory",
    };
    await channel.publish(forged);
    expect(versions()).toEqual(["1.1.0", "1.1.0"]);
    for (const i of instances) expect(i.refusals.at(-1)?.kind).toBe("hash_mismatch");
    expect(await stepOnce(instances[1]!.model)).toBeGreaterThan(0);
    // Put the channel back on a good record for the next test.
    await promoteModel(NEW, promoter);
  });

  it("rolls back to the model the current one replaced", async () => {
    await promoteModel(OLD, promoter);
    await promoteModel(NEW, promoter);
    const record = await rollbackModel(promoter);
    expect(record).toMatchObject({ dir: OLD, previous: NEW });
    expect(versions()).toEqual(["1.0.0", "1.0.0"]);
  });
});

describe("rules promotion", () => {
  it("a bad rule file is refused at promote with its line, and nothing is published", async () => {
    const bad = join(work, "bad.yaml");
    await writeFile(
      bad,
      'version: "x"\nrules:\n  - id: a\n    effect: review\n    score: 0.5\n    when: { fact: nope, op: gt, value: 1 }\n',
    );
    const err = await promoteRules(bad, promoter).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RuleSetError);
    expect((err as RuleSetError).issues[0]).toMatch(/bad\.yaml:6:\d+: .*unknown fact "nope"/);
    expect(await channel.latest("rules")).toBeUndefined();
  });

  it("a promoted rule set takes effect on every instance; a forged bad one is refused there", async () => {
    const text = (await readFile("rules/default.yaml", "utf8")).replace(
      /^version: .*$/m,
      'version: "ops-2025.2"',
    );
    const good = join(work, "good.yaml");
    await writeFile(good, text);
    await promoteRules(good, promoter);
    expect(instances.map((i) => i.rules.current.version)).toEqual(["ops-2025.2", "ops-2025.2"]);

    const badText = "version: y\nrules: []\n";
    await channel.publish({
      key: "rules",
      file: "forged.yaml",
      rulesVersion: "y",
      text: badText,
      sha256: sha256Hex(badText),
      issuedAt: new Date().toISOString(),
      issuedBy: "mallory",
    });
    expect(instances.map((i) => i.rules.current.version)).toEqual(["ops-2025.2", "ops-2025.2"]);
    expect(instances[0]!.refusals.at(-1)).toMatchObject({ kind: "rules" });
    expect(instances[0]!.refusals.at(-1)!.reason).toMatch(/forged\.yaml:2:\d+: rules/);
    // The forged record is now the latest on the channel: promote the good one again, as an
    // operator would, so instances that start later do not begin with a refusal.
    await promoteRules(good, promoter);
  });

  it("an instance that starts later reads the latest model and rules first", async () => {
    const late = new ModelSlot(await load(NEW), NEW, { load, retireAfterMs: 0 });
    const rules = new RuleSetSlot(await loadRuleSet());
    const sub = await followControl(channel, { model: late, rules });
    expect(late.current.modelVersion).toBe("1.0.0");
    expect(rules.current.version).toBe("ops-2025.2");
    await sub.stop();
    await late.current.close();
  });
});
