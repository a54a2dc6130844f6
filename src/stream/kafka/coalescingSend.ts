// One produce request in flight per sink, carrying everything published while the previous one
// was out. @platformatic/kafka's idempotent producer keeps one request in flight per broker
// connection (for ordering) and makes each send() call a request of its own, so concurrent
// publishes queued there cost one round trip each: throughput was capped at one publish per
// round trip — at +50 ms each way (slow-kafka-50ms) 64 decisions per 100 ms, under the 1,000 tx/s
// the scenario sends; at +500 ms nothing kept up at all. Merged here, a request grows with the
// round trip instead. Requests are also bounded, so a large publish is split over several:
// the broker refuses a partition's batch over message.max.bytes (1 MB by default), and the
// client's retries never make it smaller — a delivery's dead letters holding one record near
// that limit failed every retry and stopped the scorer for good (malformed at full scale).
// Order is kept: messages leave in the order they were published.

export interface CoalescingSendOptions<M> {
  /** Sends one request's messages; resolves when the broker has acknowledged them all. */
  readonly send: (messages: M[]) => Promise<void>;
  /** Most messages in one request. */
  readonly maxMessages?: number;
  /** Most bytes (by `sizeOf`) in one request; a single larger message goes alone. */
  readonly maxBytes?: number;
  readonly sizeOf?: (message: M) => number;
}

interface Publish {
  /** Messages not yet acknowledged. */
  left: number;
  failed?: unknown;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

interface Queued<M> {
  readonly message: M;
  readonly bytes: number;
  readonly publish: Publish;
}

export class CoalescingSend<M> {
  readonly #send: (messages: M[]) => Promise<void>;
  readonly #maxMessages: number;
  readonly #maxBytes: number;
  readonly #sizeOf: ((message: M) => number) | undefined;
  #queue: Queued<M>[] = [];
  #sending = false;

  constructor({
    send,
    maxMessages = 10_000,
    maxBytes = Number.POSITIVE_INFINITY,
    sizeOf,
  }: CoalescingSendOptions<M>) {
    this.#send = send;
    this.#maxMessages = maxMessages;
    this.#maxBytes = maxBytes;
    this.#sizeOf = sizeOf;
  }

  /** Resolves when every request carrying these messages is acknowledged; rejects with the first error. */
  publish(messages: readonly M[]): Promise<void> {
    if (messages.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const publish: Publish = { left: messages.length, resolve, reject };
      for (const message of messages)
        this.#queue.push({ message, bytes: this.#sizeOf?.(message) ?? 0, publish });
      if (!this.#sending) void this.#run();
    });
  }

  async #run(): Promise<void> {
    this.#sending = true;
    while (this.#queue.length > 0) {
      let taken = 0;
      let bytes = 0;
      for (const q of this.#queue) {
        if (taken > 0 && (taken >= this.#maxMessages || bytes + q.bytes > this.#maxBytes)) break;
        bytes += q.bytes;
        taken++;
      }
      const request = this.#queue.splice(0, taken);
      try {
        await this.#send(request.map((q) => q.message));
        for (const q of request) this.#settleOne(q.publish);
      } catch (err) {
        // A publish with a part refused is refused whole: its parts still queued are not sent.
        for (const q of request) q.publish.failed ??= err;
        for (const q of request) this.#settleOne(q.publish);
        const kept: Queued<M>[] = [];
        for (const q of this.#queue) {
          if (q.publish.failed === undefined) kept.push(q);
          else this.#settleOne(q.publish);
        }
        this.#queue = kept;
      }
    }
    this.#sending = false;
  }

  #settleOne(publish: Publish): void {
    if (--publish.left > 0) return;
    if (publish.failed === undefined) publish.resolve();
    else publish.reject(publish.failed);
  }
}
