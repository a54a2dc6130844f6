// The model a running scorer uses, replaceable without a restart. A promoted artifact is
// verified (signature, hashes, feature schema, and the exact manifest the operator promoted),
// loaded and warmed beside the current one, off the scoring path; only then does `current`
// change, so a batch that has pinned the old runner finishes on it and the next one starts on
// the new. A refused artifact is logged and counted, and the current model stays.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { ModelControlRecord } from "../control/controlRecord.js";
import { sha256Hex } from "../control/controlRecord.js";
import type { ModelRunner } from "./loadModelRunner.js";
import { MANIFEST_FILE } from "./manifest.js";
import { ModelArtifactError } from "./modelArtifactError.js";

export type ModelRefusal = ModelArtifactError["kind"] | "manifest_changed" | "load_failed";

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
    if (dir === this.#currentDir && record.modelVersion === this.#current.modelVersion) return "unchanged";
    const refuse = (kind: ModelRefusal, reason: string): PromotionOutcome => {
      this.#options.events?.refused?.(kind, dir, reason);
      return "refused";
    };
    let manifestBytes: Buffer;
    try {
      manifestBytes = await readFile(join(dir, MANIFEST_FILE));
    } catch (err) {
      return refuse("missing_file", `${MANIFEST_FILE}: ${(err as Error).message}`);
    }
    if (sha256Hex(manifestBytes) !== record.manifestSha256)
      return refuse("manifest_changed", `${MANIFEST_FILE} is not the one promoted (sha256 differs)`);
    let next: ModelRunner;
    try {
      next = await this.#options.load(dir);
      await next.warmUp();
    } catch (err) {
      if (err instanceof ModelArtifactError) return refuse(err.kind, err.message);
      return refuse("load_failed", (err as Error).message);
    }
    if (next.modelVersion !== record.modelVersion) {
      await next.close();
      return refuse(
        "manifest_changed",
        `${dir} is ${next.modelVersion}, the record says ${record.modelVersion}`,
      );
    }
    const previous = this.#current;
    this.#current = next;
    this.#currentDir = dir;
    this.#options.events?.switched?.(previous, next);
    setTimeout(() => void previous.close().catch(() => {}), this.#options.retireAfterMs ?? 10_000).unref();
    return "switched";
  }
}
