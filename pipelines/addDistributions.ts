// `npm run model:distributions`: a new artifact version with the same weights as an existing one
// plus the training distributions drift monitoring needs (artifacts are immutable and signed, so
// this cannot be added in place). The distributions come from running the existing model.onnx over
// the training split it was trained on, through the serving feature code: no retraining, and the
// manifest says so.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Command } from "commander";
import { FEATURE_SCHEMA_VERSION } from "../src/features/featureVector.js";
import { FP32_MODEL_FILE } from "../src/model/manifest.js";
import { OnnxStepSession } from "../src/model/onnxStepSession.js";
import { verifyModelArtifact } from "../src/model/verifyModelArtifact.js";
import { DEFAULT_RULES_PATH, loadRuleSet } from "../src/rules/ruleSet.js";
import { loadLabelledDataset, SPLIT_INDEX } from "./dataset/labelledDataset.js";
import { scoreWithOnnx } from "./evaluate/scoreWithOnnx.js";
import { ensureSigningKey, writeSignedArtifact } from "./export/signArtifact.js";
import { trainingDistributions } from "./export/trainingDistributions.js";
import { buildCardSequences } from "./train/cardSequences.js";

const program = new Command()
  .name("model:distributions")
  .description(
    "Re-issue a signed artifact under a new version with its training distributions in the manifest",
  )
  .requiredOption("--from <dir>", "existing artifact, e.g. models/fraud-lstm/1.0.0")
  .requiredOption("--model-version <version>", "the new version")
  .option("--data <dir>", "the split directory the model was trained on", "data/sim")
  .option("--keys-dir <dir>", "private signing key folder (git-ignored)", ".keys")
  .option("--trusted-keys <dir>", "trusted public keys", "models/trusted-keys")
  .action(
    async (o: { from: string; modelVersion: string; data: string; keysDir: string; trustedKeys: string }) => {
      const manifest = await verifyModelArtifact(o.from, {
        trustedKeysDir: o.trustedKeys,
        expectedFeatureSchemaVersion: FEATURE_SCHEMA_VERSION,
      });
      const data = await loadLabelledDataset({ dir: o.data });
      // The model's own width: a model of an earlier feature schema takes its prefix.
      const seqs = buildCardSequences(
        data,
        await loadRuleSet(DEFAULT_RULES_PATH),
        undefined,
        manifest.featureCount,
      );
      const session = await OnnxStepSession.open(join(o.from, FP32_MODEL_FILE), {
        featureCount: manifest.featureCount,
        hiddenSize: manifest.hiddenSize,
        intraOpThreads: 2,
      });
      const scores = await scoreWithOnnx(session, seqs);
      await session.close();
      const trainRows: number[] = [];
      for (let r = 0; r < seqs.split.length; r++) if (seqs.split[r] === SPLIT_INDEX.train) trainRows.push(r);
      const distributions = trainingDistributions(
        seqs.features,
        manifest.featureCount,
        scores,
        trainRows,
        `train split of ${o.data} (${manifest.training.data} at training time), scored with the model.onnx of ` +
          `${manifest.name} ${manifest.modelVersion} stepping every card from its first transaction; ` +
          `weights, evaluation and metrics are ${manifest.modelVersion}'s, not retrained`,
      );
      const files: Record<string, Uint8Array> = {};
      for (const file of Object.keys(manifest.files)) files[file] = await readFile(join(o.from, file));
      const key = await ensureSigningKey(o.keysDir, o.trustedKeys);
      const dir = join(o.from, "..", o.modelVersion);
      const { files: _files, signing: _signing, ...unsigned } = manifest;
      await writeSignedArtifact(
        dir,
        files,
        { ...unsigned, modelVersion: o.modelVersion, createdAt: new Date().toISOString(), distributions },
        key,
      );
      await verifyModelArtifact(dir, {
        trustedKeysDir: o.trustedKeys,
        expectedFeatureSchemaVersion: FEATURE_SCHEMA_VERSION,
      });
      console.log(
        `signed and verified ${dir} (key ${key.keyId}): ${trainRows.length} training rows described`,
      );
    },
  );

await program.parseAsync(process.argv);
