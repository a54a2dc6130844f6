// Commits a partition's offset only once everything before it is settled: its decisions
// acknowledged (the caller tracks after that) and any card-state work deferred for it applied
// (`settled`). Decisions are not held back by slow state work; only the commit waits, so a
// crash replays, rather than forgets, the state updates that had not landed (the state CAS
// makes the replay harmless). A partition's batches settle in order (one chain per partition);
// each settled batch moves the partition's ready offset forward.
//
// Ready offsets are committed together, at most once per `intervalMs`, in one call for every
// partition that moved: committing each batch as it settled cost one OffsetCommit request per
// batch, about 150 a second at 1,000 tx/s (one per ~7 transactions), and each request costs the
// scorer CPU and a loopback write. A crash replays at most the interval's worth of decided
// records more (at-least-once; Kafka's own auto-commit default is 5 s). A batch waiting long
// (records waiting for the registry) holds back only its own partition's later offsets.
import type { PartitionOffset } from "./kafkaPort.js";

export interface OffsetCommitterOptions {
  readonly commit: (offsets: readonly PartitionOffset[]) => Promise<void>;
  readonly onError?: (err: unknown, offsets: readonly PartitionOffset[]) => void;
  /** Shortest time between two commits; 0 commits as soon as a batch settles. */
  readonly intervalMs: number;
}

export class OffsetCommitter {
  readonly #options: OffsetCommitterOptions;
  readonly #chains = new Map<string, Promise<void>>();
  /** Per partition, the next offset to commit once everything before it has settled. */
  readonly #ready = new Map<string, PartitionOffset>();
  /** Partitions with a batch that failed: nothing of theirs is committed again. */
  readonly #failed = new Set<string>();
  #lastCommitAt = -Infinity;
  #timer: NodeJS.Timeout | undefined;
  #committing: Promise<void> = Promise.resolve();

  constructor(options: OffsetCommitterOptions) {
    this.#options = options;
  }

  /** Records up to and including `lastOffset` are decided; commit once `settled` resolves. */
  track(topic: string, partition: number, lastOffset: number, settled: Promise<unknown>): void {
    const key = `${topic}\u0000${partition}`;
    const previous = this.#chains.get(key) ?? Promise.resolve();
    const next = previous
      .then(() => settled)
      .then(
        () => {
          if (this.#failed.has(key)) return;
          this.#ready.set(key, { topic, partition, offset: lastOffset + 1 });
          this.#schedule();
        },
        // A batch that failed is never committed (the caller stops the process), and no later
        // batch of its partition may commit past it.
        () => {
          this.#failed.add(key);
          this.#ready.delete(key);
        },
      );
    this.#chains.set(key, next);
  }

  /** Resolves when every tracked batch has settled and its offset has been committed (or failed). */
  async flush(): Promise<void> {
    await Promise.all(this.#chains.values());
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#commitReady();
  }

  #schedule(): void {
    if (this.#timer !== undefined) return;
    const waitMs = Math.max(0, this.#lastCommitAt + this.#options.intervalMs - performance.now());
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#commitReady();
    }, waitMs);
  }

  /** Commits every ready offset in one call, after the previous commit has finished. */
  #commitReady(): Promise<void> {
    this.#committing = this.#committing.then(async () => {
      if (this.#ready.size === 0) return;
      const offsets = [...this.#ready.values()];
      this.#ready.clear();
      this.#lastCommitAt = performance.now();
      try {
        await this.#options.commit(offsets);
      } catch (err) {
        this.#options.onError?.(err, offsets);
      }
    });
    return this.#committing;
  }
}
