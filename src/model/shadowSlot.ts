// The candidate model a running scorer scores in shadow, if any. A candidate goes through what a
// promotion goes through (pinned manifest, signature, load, warm-up) off the scoring path, and is
// refused when it is the live model's version: state keys carry the model version, and a shadow
// must never write live state. Stopping retires the candidate after the batches using it.
import type { ShadowControlRecord } from "../control/controlRecord.js";
import type { ModelRunner } from "./loadModelRunner.js";
import { loadPinnedArtifact, retireRunner, type ModelRefusal, type PromotionOutcome } from "./modelSlot.js";

export interface ShadowSlotOptions {
  readonly load: (dir: string) => Promise<ModelRunner>;
  /** The live model's version now (a candidate of that version is refused). */
  readonly liveVersion: () => string;
  readonly events?: {
    started?(candidate: ModelRunner): void;
    stopped?(candidate: ModelRunner): void;
    refused?(kind: ModelRefusal, dir: string, reason: string): void;
  };
  readonly retireAfterMs?: number;
}

export class ShadowSlot {
  #current: { runner: ModelRunner; dir: string } | undefined;
  readonly #options: ShadowSlotOptions;

  constructor(options: ShadowSlotOptions) {
    this.#options = options;
  }

  /** The candidate for the next shadow batch, if any. */
  get current(): ModelRunner | undefined {
    return this.#current?.runner;
  }

  async apply(record: ShadowControlRecord): Promise<PromotionOutcome> {
    const { candidate } = record;
    const { events } = this.#options;
    if (candidate === null) {
      if (this.#current === undefined) return "unchanged";
      this.#retire();
      return "switched";
    }
    const now = this.#current;
    if (now && now.dir === candidate.dir && now.runner.modelVersion === candidate.modelVersion)
      return "unchanged";
    const refuse = (kind: ModelRefusal, reason: string): PromotionOutcome => {
      events?.refused?.(kind, candidate.dir, reason);
      return "refused";
    };
    if (candidate.modelVersion === this.#options.liveVersion())
      return refuse("same_as_live", `${candidate.modelVersion} is the live model: nothing to shadow`);
    const loaded = await loadPinnedArtifact(candidate, this.#options.load);
    if (!loaded.ok) return refuse(loaded.kind, loaded.reason);
    this.#retire();
    this.#current = { runner: loaded.runner, dir: candidate.dir };
    events?.started?.(loaded.runner);
    return "switched";
  }

  /** Stops shadowing (a promote of the candidate's own version makes it live). */
  stop(): void {
    this.#retire();
  }

  #retire(): void {
    const retired = this.#current;
    if (retired === undefined) return;
    this.#current = undefined;
    this.#options.events?.stopped?.(retired.runner);
    retireRunner(retired.runner, this.#options.retireAfterMs);
  }
}
