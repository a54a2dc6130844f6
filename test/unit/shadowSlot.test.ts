// A shadow candidate goes through what a promotion goes through, on every instance: the pinned
// manifest, the signature, load and warm-up; the live model's own version is refused (its state
// keys are live keys); --stop retires the candidate. And the running artifact promoted under
// another spelling of its folder is no switch at all.
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { InMemoryControlChannel } from "../../src/control/controlChannel.js";
import { sha256Hex } from "../../src/control/controlRecord.js";
import { followControl } from "../../src/control/followControl.js";
import { promoteModel, shadowModel } from "../../src/control/promotionRecords.js";
import type { ModelRunner } from "../../src/model/loadModelRunner.js";
import { ModelSlot, type ModelRefusal } from "../../src/model/modelSlot.js";
import { ShadowSlot } from "../../src/model/shadowSlot.js";
import { loadRuleSet } from "../../src/rules/ruleSet.js";
import { RuleSetSlot } from "../../src/rules/ruleSetSlot.js";
import { loadVerifiedModel, NEW_MODEL_DIR, OLD_MODEL_DIR, verifyWith } from "../support/signedModels.js";

const OLD = OLD_MODEL_DIR;
const NEW = NEW_MODEL_DIR;
const load = loadVerifiedModel;
const opened: ModelRunner[] = [];

afterAll(async () => {
  for (const m of opened) await m.close().catch(() => {});
});

describe("shadow candidates on the control channel", () => {
  it("loads a verified candidate, refuses the live version and a tampered one, and stops", async () => {
    const channel = new InMemoryControlChannel();
    const live = await load(OLD);
    opened.push(live);
    const refusals: ModelRefusal[] = [];
    const outcomes: string[] = [];
    const shadow = new ShadowSlot({
      load: async (dir) => {
        const m = await load(dir);
        opened.push(m);
        return m;
      },
      liveVersion: () => live.modelVersion,
      retireAfterMs: 0,
      events: { refused: (kind) => refusals.push(kind) },
    });
    await followControl(channel, {
      model: new ModelSlot(live, OLD, { load, retireAfterMs: 0 }),
      rules: new RuleSetSlot(await loadRuleSet()),
      shadow,
      onOutcome: (r, outcome) => outcomes.push(`${r.key}:${outcome}`),
    });
    const promoter = { channel, issuedBy: "test@ci", ...verifyWith };

    await shadowModel(OLD, promoter);
    expect(shadow.current).toBeUndefined();
    expect(refusals).toEqual(["same_as_live"]);

    const work = await mkdtemp(join(tmpdir(), "shadow-slot-"));
    const tampered = join(work, "tampered");
    await cp(NEW, tampered, { recursive: true });
    const onnx = await readFile(join(tampered, "model.onnx"));
    onnx.writeUInt8(onnx.readUInt8(onnx.length >> 1) ^ 0xff, onnx.length >> 1);
    await writeFile(join(tampered, "model.onnx"), onnx);
    await channel.publish({
      key: "shadow",
      candidate: {
        dir: tampered,
        modelVersion: "1.1.0",
        manifestSha256: sha256Hex(await readFile(join(tampered, "manifest.json"))),
      },
      issuedAt: new Date().toISOString(),
      issuedBy: "test@ci",
    });
    expect(shadow.current).toBeUndefined();
    expect(refusals).toHaveLength(2);
    await rm(work, { recursive: true, force: true });

    await shadowModel(NEW, promoter);
    expect(shadow.current?.modelVersion).toBe("1.1.0");
    await shadowModel(undefined, promoter);
    expect(shadow.current).toBeUndefined();
    expect(outcomes).toEqual(["shadow:refused", "shadow:refused", "shadow:switched", "shadow:switched"]);
  });

  it("promoting the running folder by its absolute path changes nothing", async () => {
    const channel = new InMemoryControlChannel();
    const running = await load(OLD);
    opened.push(running);
    const slot = new ModelSlot(running, OLD, { load, retireAfterMs: 0 });
    const outcomes: string[] = [];
    await followControl(channel, {
      model: slot,
      rules: new RuleSetSlot(await loadRuleSet()),
      onOutcome: (_r, outcome) => outcomes.push(outcome),
    });
    await promoteModel(resolve(OLD), { channel, issuedBy: "test@ci", ...verifyWith });
    expect(outcomes).toEqual(["unchanged"]);
    expect(slot.current).toBe(running);
  });
});
