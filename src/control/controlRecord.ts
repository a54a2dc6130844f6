// What an operator's `promote` / `rollback` tells every scorer instance: which model artifact or
// which rule set to run from now on. Records are keyed by what they control ("model", "rules") on
// a compacted topic, so a starting instance reads the latest of each and nothing older. A model
// record names the artifact folder (instances share the artifact store) and pins the sha256 of
// the manifest the operator verified; a rules record carries the whole rule file, so instances
// need no shared file system for rules. A shadow record names a candidate artifact, pinned the
// same way, that scores beside the live model without deciding; `candidate: null` stops it.
import { createHash } from "node:crypto";
import { z } from "zod";

export const CONTROL_KEYS = ["model", "rules", "shadow"] as const;
export type ControlKey = (typeof CONTROL_KEYS)[number];

const common = {
  issuedAt: z.string().datetime(),
  /** Who asked (user@host), for the audit log. */
  issuedBy: z.string(),
  /** What this record replaces, so `rollback` knows where to go back to. */
  previous: z.string().optional(),
};

/** An artifact folder and the manifest the operator verified in it. */
const pinnedArtifact = {
  dir: z.string().min(1),
  modelVersion: z.string().min(1),
  manifestSha256: z.string().regex(/^[0-9a-f]{64}$/),
};

export const modelControlSchema = z.strictObject({
  key: z.literal("model"),
  ...pinnedArtifact,
  ...common,
});

export const shadowControlSchema = z.strictObject({
  key: z.literal("shadow"),
  /** The candidate to score in shadow; null stops shadow scoring. */
  candidate: z.strictObject(pinnedArtifact).nullable(),
  ...common,
});

export const rulesControlSchema = z.strictObject({
  key: z.literal("rules"),
  /** The rule file's name when promoted, for logs only. */
  file: z.string(),
  rulesVersion: z.string().min(1),
  text: z.string().min(1),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  ...common,
});

export const controlRecordSchema = z.discriminatedUnion("key", [
  modelControlSchema,
  rulesControlSchema,
  shadowControlSchema,
]);
export type ControlRecord = z.infer<typeof controlRecordSchema>;
export type ModelControlRecord = z.infer<typeof modelControlSchema>;
export type RulesControlRecord = z.infer<typeof rulesControlSchema>;
export type ShadowControlRecord = z.infer<typeof shadowControlSchema>;
/** What a model or shadow record pins: the folder, its version and its manifest's sha256. */
export type PinnedArtifact = Pick<ModelControlRecord, "dir" | "modelVersion" | "manifestSha256">;

export const sha256Hex = (bytes: string | Uint8Array): string =>
  createHash("sha256").update(bytes).digest("hex");

export class ControlRecordError extends Error {
  override readonly name = "ControlRecordError";
  readonly kind = "invalid_control_record";
}

/** The value bytes of a control record on the topic (JSON; the key is `record.key`). */
export const encodeControlRecord = (record: ControlRecord): Buffer =>
  Buffer.from(JSON.stringify(record), "utf8");

export function decodeControlRecord(value: Uint8Array): ControlRecord {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(value).toString("utf8"));
  } catch (err) {
    throw new ControlRecordError(`control record is not JSON: ${(err as Error).message}`);
  }
  const parsed = controlRecordSchema.safeParse(json);
  if (!parsed.success)
    throw new ControlRecordError(
      `not a control record: ${parsed.error.issues.map((i) => i.message).join("; ")}`,
    );
  return parsed.data;
}
