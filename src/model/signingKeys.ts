// ed25519 keys for model artifacts. Trusted public keys are SPKI PEM files in
// models/trusted-keys/ named <keyId>.pub, where keyId is the first 16 hex digits of the
// sha256 of the key's DER form. Private keys never leave the git-ignored .keys/ folder.
import { createHash, createPublicKey, type KeyObject } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

export const keyIdOf = (publicKey: KeyObject): string =>
  createHash("sha256")
    .update(publicKey.export({ type: "spki", format: "der" }))
    .digest("hex")
    .slice(0, 16);

export interface TrustedKey {
  readonly keyId: string;
  readonly file: string;
  readonly key: KeyObject;
}

/** Every ed25519 public key in `dir` (*.pub / *.pem); unreadable or other-type files are skipped. */
export async function loadTrustedKeys(dir: string): Promise<TrustedKey[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const keys: TrustedKey[] = [];
  for (const file of names.filter((n) => n.endsWith(".pub") || n.endsWith(".pem")).sort()) {
    try {
      const key = createPublicKey(await readFile(join(dir, file), "utf8"));
      if (key.asymmetricKeyType === "ed25519") keys.push({ keyId: keyIdOf(key), file, key });
    } catch {
      // not a public key: ignore, a stray file must not make every artifact unverifiable
    }
  }
  return keys;
}
