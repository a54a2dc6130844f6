// Writes an immutable, signed model artifact: the files, manifest.json with their sha256, and
// manifest.sig (ed25519 over the manifest's bytes). Refuses to touch an existing version folder.
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import { chmod, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { existsSync } from "node:fs";
import { MANIFEST_FILE, manifestSchema, SIGNATURE_FILE, type Manifest } from "../../src/model/manifest.js";
import { keyIdOf } from "../../src/model/signingKeys.js";
import { sha256Hex } from "../../src/model/verifyModelArtifact.js";

export const PRIVATE_KEY_FILE = "model-signing.key";

export interface SigningKey {
  readonly privateKey: KeyObject;
  readonly keyId: string;
}

/**
 * The signing key in `keysDir`, created on first use. Its public half is (re)written to
 * `trustedKeysDir/<keyId>.pub` so artifacts signed with it verify.
 */
export async function ensureSigningKey(keysDir: string, trustedKeysDir: string): Promise<SigningKey> {
  const path = join(keysDir, PRIVATE_KEY_FILE);
  let privateKey: KeyObject;
  if (existsSync(path)) {
    privateKey = createPrivateKey(await readFile(path, "utf8"));
  } else {
    privateKey = generateKeyPairSync("ed25519").privateKey;
    await mkdir(keysDir, { recursive: true, mode: 0o700 });
    await writeFile(path, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
    await chmod(path, 0o600);
  }
  const publicKey = createPublicKey(privateKey);
  const keyId = keyIdOf(publicKey);
  await mkdir(trustedKeysDir, { recursive: true });
  await writeFile(join(trustedKeysDir, `${keyId}.pub`), publicKey.export({ type: "spki", format: "pem" }));
  return { privateKey, keyId };
}

export type UnsignedManifest = Omit<Manifest, "files" | "signing">;

export async function writeSignedArtifact(
  dir: string,
  files: Readonly<Record<string, Uint8Array>>,
  manifest: UnsignedManifest,
  key: SigningKey,
): Promise<Manifest> {
  if (existsSync(dir))
    throw new Error(`${dir} already exists: model artifacts are immutable, pick a new version`);
  const full: Manifest = manifestSchema.parse({
    ...manifest,
    files: Object.fromEntries(
      Object.entries(files).map(([name, bytes]) => [name, { sha256: sha256Hex(bytes), bytes: bytes.length }]),
    ),
    signing: { algorithm: "ed25519", keyId: key.keyId },
  });
  const manifestBytes = Buffer.from(JSON.stringify(full, null, 2) + "\n", "utf8");
  // Write beside the target and rename, so a crash never leaves a half-written version folder.
  const staging = join(dirname(dir), `.staging-${manifest.modelVersion}-${process.pid}`);
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  for (const [name, bytes] of Object.entries(files)) await writeFile(join(staging, name), bytes);
  await writeFile(join(staging, MANIFEST_FILE), manifestBytes);
  await writeFile(
    join(staging, SIGNATURE_FILE),
    sign(null, manifestBytes, key.privateKey).toString("base64") + "\n",
  );
  await rename(staging, dir);
  return full;
}
