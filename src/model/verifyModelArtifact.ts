// Refuses any model artifact that is unsigned, signed by an untrusted key, altered after
// signing, padded with unlisted files, or built for another feature schema. The signature is
// checked before the manifest is even parsed, so nothing unsigned is interpreted.
import { createHash, verify } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { FEATURE_SCHEMAS, featureWidthFor } from "../features/featureVector.js";
import { ModelArtifactError } from "./modelArtifactError.js";
import { MANIFEST_FILE, manifestSchema, SIGNATURE_FILE, type Manifest } from "./manifest.js";
import { loadTrustedKeys } from "./signingKeys.js";

export interface VerifyOptions {
  readonly trustedKeysDir: string;
  readonly expectedFeatureSchemaVersion?: string;
}

export const sha256Hex = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

async function readRequired(dir: string, file: string): Promise<Buffer> {
  try {
    return await readFile(join(dir, file));
  } catch {
    throw new ModelArtifactError("missing_file", file, "missing", dir);
  }
}

/** Reads a file the verified manifest lists, checking its hash on the very bytes returned. */
export async function readVerifiedFile(dir: string, manifest: Manifest, file: string): Promise<Buffer> {
  const expected = manifest.files[file];
  if (expected === undefined)
    throw new ModelArtifactError("missing_file", file, "not listed in manifest.json", dir);
  const bytes = await readRequired(dir, file);
  const actual = sha256Hex(bytes);
  if (actual !== expected.sha256) {
    throw new ModelArtifactError(
      "hash_mismatch",
      file,
      `sha256 ${actual} does not match the manifest's ${expected.sha256}`,
      dir,
    );
  }
  return bytes;
}

export async function verifyModelArtifact(
  dir: string,
  { trustedKeysDir, expectedFeatureSchemaVersion }: VerifyOptions,
): Promise<Manifest> {
  const manifestBytes = await readRequired(dir, MANIFEST_FILE);
  const signatureText = await readRequired(dir, SIGNATURE_FILE);
  const keys = await loadTrustedKeys(trustedKeysDir);
  if (keys.length === 0) {
    throw new ModelArtifactError(
      "no_trusted_keys",
      trustedKeysDir,
      "no ed25519 public key (*.pub) to verify with",
      dir,
    );
  }
  const signature = Buffer.from(signatureText.toString("utf8").trim(), "base64");
  const trusted = keys.some((k) => signature.length === 64 && verify(null, manifestBytes, k.key, signature));
  if (!trusted) {
    throw new ModelArtifactError(
      "bad_signature",
      `${SIGNATURE_FILE}`,
      `signature does not verify ${MANIFEST_FILE} with any trusted key in ${trustedKeysDir} (${MANIFEST_FILE} or ${SIGNATURE_FILE} altered, or signed by an unknown key)`,
      dir,
    );
  }
  let manifest: Manifest;
  try {
    manifest = manifestSchema.parse(JSON.parse(manifestBytes.toString("utf8")));
  } catch (err) {
    throw new ModelArtifactError(
      "invalid_manifest",
      MANIFEST_FILE,
      `not a valid manifest: ${(err as Error).message}`,
      dir,
    );
  }
  for (const file of Object.keys(manifest.files).sort()) await readVerifiedFile(dir, manifest, file);
  const present = await readdir(dir);
  for (const file of present.sort()) {
    if (file !== MANIFEST_FILE && file !== SIGNATURE_FILE && !(file in manifest.files)) {
      throw new ModelArtifactError(
        "unlisted_file",
        file,
        "present but not covered by the signed manifest",
        dir,
      );
    }
  }
  // The build computes `expectedFeatureSchemaVersion`; a model of an earlier schema is fed that
  // schema's prefix of the vector, so it is accepted only if its names are exactly that prefix.
  if (expectedFeatureSchemaVersion !== undefined) {
    const fit =
      FEATURE_SCHEMAS[expectedFeatureSchemaVersion] === undefined
        ? ({ ok: false, reason: `this build computes "${expectedFeatureSchemaVersion}"` } as const)
        : featureWidthFor(manifest.featureSchemaVersion, manifest.featureNames);
    if (!fit.ok || manifest.featureCount !== fit.width) {
      throw new ModelArtifactError(
        "feature_schema_mismatch",
        MANIFEST_FILE,
        `model ${manifest.name} ${manifest.modelVersion} was trained on feature schema "${manifest.featureSchemaVersion}" and cannot be fed: ` +
          (fit.ok
            ? `featureCount ${manifest.featureCount} is not its ${fit.width} feature names`
            : fit.reason),
        dir,
      );
    }
  }
  return manifest;
}
