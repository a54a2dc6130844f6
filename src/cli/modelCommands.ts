// `fraud-scorer model …`: verify and inspect signed model artifacts.
import type { Command } from "commander";
import { FEATURE_SCHEMA_VERSION, featureWidthFor } from "../features/featureVector.js";
import { ModelArtifactError } from "../model/modelArtifactError.js";
import { verifyModelArtifact } from "../model/verifyModelArtifact.js";
import { promoteModel, PromotionError, rollbackModel, shadowModel } from "../control/promotionRecords.js";
import { refuseArguments } from "./cliArguments.js";
import {
  addControlChannelOptions,
  issuedBy,
  openControlChannel,
  type ControlChannelFlags,
} from "./controlChannelOptions.js";

const DEFAULT_TRUSTED_KEYS = "models/trusted-keys";

async function verifyOrExit(dir: string, trustedKeysDir: string) {
  try {
    return await verifyModelArtifact(dir, { trustedKeysDir });
  } catch (err) {
    if (!(err instanceof ModelArtifactError)) throw err;
    console.error(`REFUSED ${err.message}`);
    process.exitCode = 1;
    return null;
  }
}

export function registerModelCommands(program: Command): void {
  const model = program.command("model").description("model artifacts (verify, inspect, promote, roll back)");

  model
    .command("verify")
    .description("check every file hash and the manifest signature; exit 0 only if all hold")
    .argument("<dir>", "artifact folder, e.g. models/fraud-lstm/1.0.0")
    .option("--trusted-keys <dir>", "folder of trusted ed25519 public keys", DEFAULT_TRUSTED_KEYS)
    .action(async (dir: string, o: { trustedKeys: string }) => {
      const manifest = await verifyOrExit(dir, o.trustedKeys);
      if (manifest === null) return;
      const files = Object.keys(manifest.files).length;
      console.log(
        `OK ${manifest.name} ${manifest.modelVersion}: ${files} files match manifest.json, signed by key ${manifest.signing.keyId}`,
      );
      if (manifest.featureSchemaVersion !== FEATURE_SCHEMA_VERSION) {
        const fit = featureWidthFor(manifest.featureSchemaVersion, manifest.featureNames);
        console.log(
          fit.ok
            ? `note: trained on feature schema ${manifest.featureSchemaVersion}; this build computes ${FEATURE_SCHEMA_VERSION} and feeds it the first ${fit.width} features`
            : `note: ${fit.reason}, so serving will refuse it`,
        );
      }
    });

  addControlChannelOptions(
    model
      .command("promote")
      .description("verify an artifact, then point every running scorer at it through the control topic")
      .argument("<dir>", "artifact folder, e.g. models/fraud-lstm/1.1.0")
      .option("--trusted-keys <dir>", "folder of trusted ed25519 public keys", DEFAULT_TRUSTED_KEYS),
  ).action(async (dir: string, o: ControlChannelFlags & { trustedKeys: string }) => {
    await publishModel("model promote", o, (options) => promoteModel(dir, options));
  });

  addControlChannelOptions(
    model
      .command("rollback")
      .description("promote again the artifact the current promotion replaced (verified again)")
      .option("--trusted-keys <dir>", "folder of trusted ed25519 public keys", DEFAULT_TRUSTED_KEYS),
  ).action(async (o: ControlChannelFlags & { trustedKeys: string }) => {
    await publishModel("model rollback", o, (options) => rollbackModel(options));
  });

  addControlChannelOptions(
    model
      .command("shadow")
      .description(
        "verify a candidate artifact, then have every running scorer score it in shadow (decisions to the shadow topic); --stop ends it",
      )
      .argument("[dir]", "candidate artifact folder, e.g. models/fraud-lstm/1.1.0")
      .option("--stop", "stop shadow scoring")
      .option("--trusted-keys <dir>", "folder of trusted ed25519 public keys", DEFAULT_TRUSTED_KEYS),
  ).action(
    async (dir: string | undefined, o: ControlChannelFlags & { trustedKeys: string; stop?: boolean }) => {
      if ((dir === undefined) === (o.stop !== true))
        refuseArguments("model shadow", ["give a candidate folder, or --stop (not both)"]);
      const channel = await openControlChannel("model shadow", o);
      try {
        const record = await shadowModel(dir, {
          channel,
          issuedBy: issuedBy(),
          trustedKeysDir: o.trustedKeys,
          expectedFeatureSchemaVersion: FEATURE_SCHEMA_VERSION,
        });
        console.log(
          record.candidate === null
            ? `PUBLISHED shadow stop to ${channel.topic}`
            : `PUBLISHED shadow candidate ${record.candidate.modelVersion} (${record.candidate.dir}) to ${channel.topic}`,
        );
      } catch (err) {
        if (!(err instanceof ModelArtifactError)) throw err;
        console.error(`REFUSED ${err.message}`);
        process.exitCode = 1;
      }
    },
  );

  model
    .command("info")
    .description("print a verified artifact's versions, interface and metrics")
    .argument("<dir>", "artifact folder")
    .option("--trusted-keys <dir>", "folder of trusted ed25519 public keys", DEFAULT_TRUSTED_KEYS)
    .action(async (dir: string, o: { trustedKeys: string }) => {
      const m = await verifyOrExit(dir, o.trustedKeys);
      if (m === null) return;
      const shape = (t: { name: string; shape: (number | string)[] }) => `${t.name}[${t.shape.join(",")}]`;
      const metric = (name: string, x: typeof m.metrics.fp32) =>
        `  ${name.padEnd(6)} ROC-AUC ${x.rocAuc.toFixed(4)}  PR-AUC ${x.prAuc.toFixed(4)}  recall@0.5%FPR ${x.recallAt0_5PctFpr.toFixed(3)}  recall@1%FPR ${x.recallAt1PctFpr.toFixed(3)}`;
      console.log(
        [
          `${m.name} ${m.modelVersion} (created ${m.createdAt}, signed by ${m.signing.keyId})`,
          `feature schema ${m.featureSchemaVersion}: ${m.featureCount} features; LSTM hidden size ${m.hiddenSize}`,
          `inputs  ${Object.values(m.io.inputs).map(shape).join("  ")}`,
          `outputs ${Object.values(m.io.outputs).map(shape).join("  ")}`,
          `training seed ${m.training.seed}, ${m.training.epochs} epochs (best ${m.training.bestEpoch}), data ${m.training.data}`,
          `metrics on the ${m.metrics.split} split (rules ${m.rulesVersion}):`,
          metric("fp32", m.metrics.fp32),
          metric("int8", m.metrics.int8),
          metric("rules", m.metrics.rules),
        ].join("\n"),
      );
    });
}

type PublishModelOptions = Parameters<typeof rollbackModel>[0];

/** Verification and rollback failures are one line and exit 1; nothing is published then. */
async function publishModel(
  command: string,
  o: ControlChannelFlags & { trustedKeys: string },
  publish: (options: PublishModelOptions) => Promise<{ modelVersion: string; dir: string }>,
): Promise<void> {
  const channel = await openControlChannel(command, o);
  try {
    const record = await publish({
      channel,
      issuedBy: issuedBy(),
      trustedKeysDir: o.trustedKeys,
      expectedFeatureSchemaVersion: FEATURE_SCHEMA_VERSION,
    });
    console.log(`PUBLISHED model ${record.modelVersion} (${record.dir}) to ${channel.topic}`);
  } catch (err) {
    if (!(err instanceof ModelArtifactError) && !(err instanceof PromotionError)) throw err;
    console.error(`REFUSED ${err.message}`);
    process.exitCode = 1;
  }
}
