// The ports `serve` scores with follow promotions: a promoted model comes with a card-state store
// of its own version, the ports a batch pinned stay as they were, a refused artifact leaves
// everything as it is, and a promoted rule set changes only the rules.
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InMemoryControlChannel } from "../../src/control/controlChannel.js";
import { sha256Hex } from "../../src/control/controlRecord.js";
import { followPromotions, type PromotedPorts } from "../../src/control/promotedPorts.js";
import { promoteModel, promoteRules } from "../../src/control/promotionRecords.js";
import { MemoryCardStateStore } from "../../src/features/memoryCardStateStore.js";
import { loadRuleSet } from "../../src/rules/ruleSet.js";
import { loadVerifiedModel, NEW_MODEL_DIR, OLD_MODEL_DIR, verifyWith } from "../support/signedModels.js";

const OLD = OLD_MODEL_DIR;
const NEW = NEW_MODEL_DIR;
const load = loadVerifiedModel;

const channel = new InMemoryControlChannel();
const storesMade: string[] = [];
const outcomes: string[] = [];
let promoted: PromotedPorts;
let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "promoted-ports-"));
  promoted = await followPromotions({
    channel,
    model: await load(OLD),
    modelDir: OLD,
    rules: await loadRuleSet(),
    loadModel: load,
    storeFor: (version) => (storesMade.push(version), new MemoryCardStateStore()),
    logger: pino({ level: "silent" }),
    onOutcome: (record, outcome) => outcomes.push(`${record.key}:${outcome}`),
  });
});

afterAll(async () => {
  await promoted.stop();
  await rm(work, { recursive: true, force: true });
});

describe("followPromotions", () => {
  it("switches model and store together; a batch's pinned ports do not change", async () => {
    const pinned = promoted.current();
    await promoteModel(NEW, { channel, issuedBy: "test", ...verifyWith });
    const next = promoted.current();
    expect(pinned.model.modelVersion).toBe("1.0.0");
    expect(next.model.modelVersion).toBe("1.1.0");
    expect(next.store).not.toBe(pinned.store);
    expect(storesMade).toEqual(["1.0.0", "1.1.0"]);
    expect(next.rules).toBe(pinned.rules);
  });

  it("keeps model and store when an artifact is tampered", async () => {
    const before = promoted.current();
    const tampered = join(work, "tampered");
    await cp(OLD, tampered, { recursive: true });
    const onnx = await readFile(join(tampered, "model.onnx"));
    onnx.writeUInt8(onnx.readUInt8(100) ^ 0xff, 100);
    await writeFile(join(tampered, "model.onnx"), onnx);
    await channel.publish({
      key: "model",
      dir: tampered,
      modelVersion: "1.0.0",
      manifestSha256: sha256Hex(await readFile(join(tampered, "manifest.json"))),
      issuedAt: new Date().toISOString(),
      issuedBy: "test",
    });
    expect(outcomes.at(-1)).toBe("model:refused");
    expect(promoted.current()).toBe(before);
  });

  it("changes only the rules on a rules promotion", async () => {
    const before = promoted.current();
    const file = join(work, "rules.yaml");
    const text = await readFile("rules/default.yaml", "utf8");
    await writeFile(file, text.replace(/^version: .*$/m, 'version: "unit-promoted"'));
    await promoteRules(file, { channel, issuedBy: "test" });
    const after = promoted.current();
    expect(after.rules.version).toBe("unit-promoted");
    expect(after.model).toBe(before.model);
    expect(after.store).toBe(before.store);
  });
});
