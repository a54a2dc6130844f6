// Commits a partition's offset only once everything before it is settled: its decisions
// acknowledged (the caller tracks after that) and any card-state work deferred for it applied
// (`settled`). Decisions are not held back by slow state work; only the commit waits, so a
// crash replays, rather than forgets, the state updates that had not landed (the state CAS
// makes the replay harmless). Commits for one partition run in order, and a commit that a
// newer one has overtaken in the queue is skipped, unless the partition has had no commit for
// a second: when every batch waits long (records waiting for the registry, malformed), a newer
// one was always queued, every commit was skipped, and nothing was committed for minutes.
export interface OffsetCommitterOptions {
  readonly commit: (topic: string, partition: number, nextOffset: string) => Promise<void>;
  readonly onError?: (err: unknown, topic: string, partition: number) => void;
}

/** Longest a partition goes without a commit while its batches keep settling. */
const MAX_COMMIT_GAP_MS = 1_000;

export class OffsetCommitter {
  readonly #options: OffsetCommitterOptions;
  readonly #chains = new Map<string, Promise<void>>();
  readonly #latest = new Map<string, number>();
  readonly #committedAt = new Map<string, number>();

  constructor(options: OffsetCommitterOptions) {
    this.#options = options;
  }

  /** Records up to and including `lastOffset` are decided; commit once `settled` resolves. */
  track(topic: string, partition: number, lastOffset: number, settled: Promise<unknown>): void {
    const key = `${topic}\u0000${partition}`;
    this.#latest.set(key, lastOffset);
    if (!this.#committedAt.has(key)) this.#committedAt.set(key, performance.now());
    const previous = this.#chains.get(key) ?? Promise.resolve();
    const next = previous
      .then(() => settled)
      .then(async () => {
        const recently = performance.now() - this.#committedAt.get(key)! < MAX_COMMIT_GAP_MS;
        if (this.#latest.get(key)! > lastOffset && recently) return; // a later commit is queued behind
        this.#committedAt.set(key, performance.now());
        await this.#options.commit(topic, partition, String(lastOffset + 1));
      })
      .catch((err: unknown) => this.#options.onError?.(err, topic, partition));
    this.#chains.set(key, next);
  }

  /** Resolves when every tracked commit has been attempted. */
  async flush(): Promise<void> {
    await Promise.all(this.#chains.values());
  }
}
