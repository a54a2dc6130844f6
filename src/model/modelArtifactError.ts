// Why a model artifact was refused, naming the file to look at.
export type ModelArtifactErrorKind =
  | "missing_file" // a file the manifest lists, or manifest.json / manifest.sig, is absent
  | "unlisted_file" // a file in the folder the manifest does not cover
  | "hash_mismatch" // a file's sha256 differs from the manifest's
  | "bad_signature" // manifest.sig does not verify manifest.json with any trusted key
  | "no_trusted_keys" // the trusted-keys folder holds no usable public key
  | "invalid_manifest" // signed, but not a manifest this version understands
  | "feature_schema_mismatch"; // trained on another feature schema than this build computes

export class ModelArtifactError extends Error {
  override readonly name = "ModelArtifactError";
  constructor(
    readonly kind: ModelArtifactErrorKind,
    /** The file at fault, relative to the artifact folder (or the trusted-keys folder). */
    readonly file: string,
    message: string,
    readonly dir: string,
  ) {
    super(`${file}: ${message} (artifact ${dir})`);
  }
}
