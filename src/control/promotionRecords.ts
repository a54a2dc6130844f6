// The operator's side of promotion: build the control record for `model promote <dir>`,
// `model rollback` and `rules promote <file>`, after checking locally what every instance will
// check again (a model that does not verify or a rule file that does not compile is never
// published). The CLI commands are these plus a ControlChannel bound to the Kafka port.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { MANIFEST_FILE } from "../model/manifest.js";
import { verifyModelArtifact } from "../model/verifyModelArtifact.js";
import { parseRuleSet } from "../rules/ruleSet.js";
import type { ControlChannel } from "./controlChannel.js";
import { sha256Hex, type ModelControlRecord, type RulesControlRecord } from "./controlRecord.js";

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

export async function promoteModel(
  dir: string,
  {
    trustedKeysDir,
    expectedFeatureSchemaVersion,
    ...o
  }: PromoteOptions & {
    trustedKeysDir: string;
    expectedFeatureSchemaVersion: string;
  },
): Promise<ModelControlRecord> {
  const manifest = await verifyModelArtifact(dir, { trustedKeysDir, expectedFeatureSchemaVersion });
  const current = await o.channel.latest("model");
  const record: ModelControlRecord = {
    key: "model",
    dir,
    modelVersion: manifest.modelVersion,
    manifestSha256: sha256Hex(await readFile(join(dir, MANIFEST_FILE))),
    issuedAt: (o.now?.() ?? new Date()).toISOString(),
    issuedBy: o.issuedBy,
    ...(current?.key === "model" ? { previous: current.dir } : {}),
  };
  await o.channel.publish(record);
  return record;
}

/** Promotes the artifact the current record replaced (verified again, like any promotion). */
export async function rollbackModel(
  o: PromoteOptions & { trustedKeysDir: string; expectedFeatureSchemaVersion: string },
): Promise<ModelControlRecord> {
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
