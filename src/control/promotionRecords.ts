// The operator's side of promotion: build the control record for `model promote <dir>`,
// `model rollback`, `model shadow <dir>` / `--stop` and `rules promote <file>`, after checking locally what every instance will
// check again (a model that does not verify or a rule file that does not compile is never
// published). The CLI commands are these plus a ControlChannel bound to the Kafka port.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { MANIFEST_FILE } from "../model/manifest.js";
import { verifyModelArtifact } from "../model/verifyModelArtifact.js";
import { parseRuleSet } from "../rules/ruleSet.js";
import type { ControlChannel } from "./controlChannel.js";
import {
  sha256Hex,
  type ModelControlRecord,
  type PinnedArtifact,
  type RulesControlRecord,
  type ShadowControlRecord,
} from "./controlRecord.js";

export interface PromoteOptions {
  readonly channel: ControlChannel;
  readonly issuedBy: string;
  readonly now?: () => Date;
}

export class PromotionError extends Error {
  override readonly name = "PromotionError";
  constructor(
    readonly kind: "nothing_to_roll_back_to",
    message: string,
  ) {
    super(message);
  }
}

type VerifyOptions = { trustedKeysDir: string; expectedFeatureSchemaVersion: string };

/** Verifies an artifact here and pins what every instance must find: its version and manifest. */
async function pinArtifact(dir: string, verify: VerifyOptions): Promise<PinnedArtifact> {
  const manifest = await verifyModelArtifact(dir, verify);
  return {
    dir,
    modelVersion: manifest.modelVersion,
    manifestSha256: sha256Hex(await readFile(join(dir, MANIFEST_FILE))),
  };
}

export async function promoteModel(
  dir: string,
  { trustedKeysDir, expectedFeatureSchemaVersion, ...o }: PromoteOptions & VerifyOptions,
): Promise<ModelControlRecord> {
  const pinned = await pinArtifact(dir, { trustedKeysDir, expectedFeatureSchemaVersion });
  const current = await o.channel.latest("model");
  const record: ModelControlRecord = {
    key: "model",
    ...pinned,
    issuedAt: (o.now?.() ?? new Date()).toISOString(),
    issuedBy: o.issuedBy,
    ...(current?.key === "model" ? { previous: current.dir } : {}),
  };
  await o.channel.publish(record);
  return record;
}

/** Starts shadow scoring with a candidate artifact (dir), or stops it (undefined). */
export async function shadowModel(
  dir: string | undefined,
  { trustedKeysDir, expectedFeatureSchemaVersion, ...o }: PromoteOptions & VerifyOptions,
): Promise<ShadowControlRecord> {
  const candidate =
    dir === undefined ? null : await pinArtifact(dir, { trustedKeysDir, expectedFeatureSchemaVersion });
  const record: ShadowControlRecord = {
    key: "shadow",
    candidate,
    issuedAt: (o.now?.() ?? new Date()).toISOString(),
    issuedBy: o.issuedBy,
  };
  await o.channel.publish(record);
  return record;
}

/** Promotes the artifact the current record replaced (verified again, like any promotion). */
export async function rollbackModel(o: PromoteOptions & VerifyOptions): Promise<ModelControlRecord> {
  const current = await o.channel.latest("model");
  if (current?.key !== "model" || current.previous === undefined)
    throw new PromotionError("nothing_to_roll_back_to", "no promoted model with a previous one to return to");
  return promoteModel(current.previous, o);
}

export async function promoteRules(file: string, o: PromoteOptions): Promise<RulesControlRecord> {
  const text = await readFile(file, "utf8");
  const ruleSet = parseRuleSet(text, file); // throws RuleSetError with lines: nothing is published
  const current = await o.channel.latest("rules");
  const record: RulesControlRecord = {
    key: "rules",
    file,
    rulesVersion: ruleSet.version,
    text,
    sha256: sha256Hex(text),
    issuedAt: (o.now?.() ?? new Date()).toISOString(),
    issuedBy: o.issuedBy,
    ...(current?.key === "rules" ? { previous: current.rulesVersion } : {}),
  };
  await o.channel.publish(record);
  return record;
}
