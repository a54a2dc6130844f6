// The model a running scorer uses, replaceable without a restart. A promoted artifact is
// verified (signature, hashes, feature schema, and the exact manifest the operator promoted),
// loaded and warmed beside the current one, off the scoring path; only then does `current`
// change, so a batch that has pinned the old runner finishes on it and the next one starts on
// the new. A refused artifact is logged and counted, and the current model stays.
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { ModelControlRecord, PinnedArtifact } from "../control/controlRecord.js";
import { sha256Hex } from "../control/controlRecord.js";
import type { ModelRunner } from "./loadModelRunner.js";
import { MANIFEST_FILE } from "./manifest.js";
import { ModelArtifactError } from "./modelArtifactError.js";

export type ModelRefusal = ModelArtifactError["kind"] | "manifest_changed" | "load_failed" | "same_as_live";

export interface ModelSlotEvents {
  switched?(from: ModelRunner, to: ModelRunner): void;
  refused?(kind: ModelRefusal, dir: string, reason: string): void;
}

export interface ModelSlotOptions {
  /** Verifies, loads and opens an artifact folder (loadModelRunner with the scorer's settings). */
  readonly load: (dir: string) => Promise<ModelRunner>;
  readonly events?: ModelSlotEvents;
  /** How long the replaced runner stays open for a batch that pinned it (batches last ≤ the budget). */
  readonly retireAfterMs?: number;
}

export type PromotionOutcome = "switched" | "unchanged" | "refused";

export type LoadedArtifact =
  | { readonly ok: true; readonly runner: ModelRunner }
  | { readonly ok: false; readonly kind: ModelRefusal; readonly reason: string };

/**
 * What a promotion and a shadow candidate both go through: the manifest must be the one pinned,
 * the artifact must verify and load, the model is warmed, and its version must be the pinned one.
 */
export async function loadPinnedArtifact(
  pin: PinnedArtifact,
  load: (dir: string) => Promise<ModelRunner>,
): Promise<LoadedArtifact> {
  const { dir } = pin;
  let manifestBytes: Buffer;
  try {
    manifestBytes = await readFile(join(dir, MANIFEST_FILE));
  } catch (err) {
    return { ok: false, kind: "missing_file", reason: `${MANIFEST_FILE}: ${(err as Error).message}` };
  }
  if (sha256Hex(manifestBytes) !== pin.manifestSha256)
    return {
      ok: false,
      kind: "manifest_changed",
      reason: `${MANIFEST_FILE} is not the one promoted (sha256 differs)`,
    };
  let runner: ModelRunner;
  try {
    runner = await load(dir);
    await runner.warmUp();
  } catch (err) {
    if (err instanceof ModelArtifactError) return { ok: false, kind: err.kind, reason: err.message };
    return { ok: false, kind: "load_failed", reason: (err as Error).message };
  }
  if (runner.modelVersion !== pin.modelVersion) {
    await runner.close();
    return {
      ok: false,
      kind: "manifest_changed",
      reason: `${dir} is ${runner.modelVersion}, the record says ${pin.modelVersion}`,
    };
  }
  return { ok: true, runner };
}

/** Closes a replaced runner once no batch that pinned it can still be using it. */
export const retireRunner = (runner: ModelRunner, afterMs = 10_000): void =>
  void setTimeout(() => void runner.close().catch(() => {}), afterMs).unref();

export class ModelSlot {
  #current: ModelRunner;
  #currentDir: string;
  readonly #options: ModelSlotOptions;

  constructor(initial: ModelRunner, initialDir: string, options: ModelSlotOptions) {
    this.#current = initial;
    this.#currentDir = initialDir;
    this.#options = options;
  }

  /** The runner for the next batch: read once per batch and keep it for the whole batch. */
  get current(): ModelRunner {
    return this.#current;
  }

  get currentDir(): string {
    return this.#currentDir;
  }

  async apply(record: ModelControlRecord): Promise<PromotionOutcome> {
    const { dir } = record;
    // The same folder however it is written (MODEL_DIR is often relative, a promotion absolute).
    if (resolve(dir) === resolve(this.#currentDir) && record.modelVersion === this.#current.modelVersion)
      return "unchanged";
    const loaded = await loadPinnedArtifact(record, this.#options.load);
    if (!loaded.ok) {
      this.#options.events?.refused?.(loaded.kind, dir, loaded.reason);
      return "refused";
    }
    const previous = this.#current;
    this.#current = loaded.runner;
    this.#currentDir = dir;
    this.#options.events?.switched?.(previous, loaded.runner);
    retireRunner(previous, this.#options.retireAfterMs);
    return "switched";
  }
}
