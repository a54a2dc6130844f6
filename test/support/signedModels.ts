// The two signed model versions committed for promotion and shadow tests, and how every test
// verifies and loads them (the trusted keys and feature schema `serve` checks against).
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { FEATURE_SCHEMA_VERSION } from "../../src/features/featureVector.js";
import { loadModelRunner } from "../../src/model/loadModelRunner.js";

export const OLD_MODEL_DIR = "models/fraud-lstm/1.0.0";
export const NEW_MODEL_DIR = "models/fraud-lstm/1.1.0";

export const verifyWith = {
  trustedKeysDir: "models/trusted-keys",
  expectedFeatureSchemaVersion: FEATURE_SCHEMA_VERSION,
};

export const loadVerifiedModel = (dir: string) => loadModelRunner({ dir, provider: "cpu", ...verifyWith });

/** The model version a folder's signed manifest declares. */
export const manifestVersion = async (dir: string): Promise<string> =>
  (JSON.parse(await readFile(join(dir, "manifest.json"), "utf8")) as { modelVersion: string }).modelVersion;
