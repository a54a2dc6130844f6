// Produce requests for a sink: everything published while a lane's previous request was out
// leaves together in its next one, and up to `lanes` requests are in flight at once, each on a
// lane (a producer) of its own. Why lanes: @platformatic/kafka's idempotent producer keeps ONE
// request in flight per broker connection (producer.js sets maxInflights = 1 whenever
// `idempotent` is on, whatever the options say), so a single producer pays a whole round trip
// before the next request may leave. At +50 ms each way (slow-kafka-50ms) a decision waited up
// to 100 ms for the previous request's answer before its own 50 ms trip to the broker; Kafka
// itself allows 5 idempotent requests in flight, which the client does not implement. Several
// idempotent producers (own connection, own producer id, so each still drops its own re-sends)
// give the pipelining back.
// Order is kept per order key (Kafka's guarantee is per key: same key, same partition): a
// message whose key is in flight on another lane, or queued behind one that is, waits for it.
// With one lane, or one key for everything, messages leave exactly in the order published.
// Requests are also bounded, so a large publish is split over several: the broker refuses a
// partition's batch over message.max.bytes (1 MB by default), and the client's retries never
// make it smaller — a delivery's dead letters holding one record near that limit failed every
// retry and stopped the scorer for good (malformed at full scale).

export interface CoalescingSendOptions<M> {
  /** Sends one request's messages on lane `lane`; resolves when the broker has acknowledged them all. */
  readonly send: (messages: M[], lane: number) => Promise<void>;
  /** Requests in flight at once, each on its own lane (default 1). */
  readonly lanes?: number;
  /** Messages of one key leave in publish order; absent, every message shares one key. */
  readonly orderKeyOf?: (message: M) => string;
  /** Most messages in one request. */
  readonly maxMessages?: number;
  /** Most bytes (by `sizeOf`) in one request; a single larger message goes alone. */
  readonly maxBytes?: number;
  readonly sizeOf?: (message: M) => number;
}

/** Queued messages one request looks at, at most (see #take). */
const MAX_SCAN = 20_000;
/** Spent slots at the queue's front tolerated before they are dropped (see #take). */
const SPENT_BEFORE_COMPACTING = 4_096;

interface Publish {
  /** Messages not yet acknowledged. */
  left: number;
  failed?: unknown;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

interface Queued<M> {
  readonly message: M;
  readonly key: string;
  readonly bytes: number;
  readonly publish: Publish;
}

export class CoalescingSend<M> {
  readonly #send: (messages: M[], lane: number) => Promise<void>;
  readonly #orderKeyOf: ((message: M) => string) | undefined;
  readonly #maxMessages: number;
  readonly #maxBytes: number;
  readonly #sizeOf: ((message: M) => number) | undefined;
  /** Queued messages are #queue[#head…]; the prefix is spent and dropped now and then (#take). */
  #queue: Queued<M>[] = [];
  #head = 0;
  /** busy[lane]: a request is out on it. */
  readonly #busy: boolean[];
  /** Order keys with a request in flight, and how many of its messages are out. */
  readonly #keysInFlight = new Map<string, number>();

  constructor({
    send,
    lanes = 1,
    orderKeyOf,
    maxMessages = 10_000,
    maxBytes = Number.POSITIVE_INFINITY,
    sizeOf,
  }: CoalescingSendOptions<M>) {
    this.#send = send;
    this.#busy = Array.from({ length: Math.max(1, lanes) }, () => false);
    this.#orderKeyOf = orderKeyOf;
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
        this.#queue.push({
          message,
          key: this.#orderKeyOf?.(message) ?? "",
          bytes: this.#sizeOf?.(message) ?? 0,
          publish,
        });
      this.#pump();
    });
  }

  /** Starts a request on every idle lane that has something it may send. */
  #pump(): void {
    for (let lane = 0; lane < this.#busy.length && this.#queue.length > this.#head; lane++) {
      if (this.#busy[lane]) continue;
      const request = this.#take();
      if (request.length === 0) return;
      void this.#run(lane, request);
    }
  }

  /**
   * The next request: queued messages in order, skipping keys in flight or already skipped. The
   * scan stops once the request is full, or after MAX_SCAN messages: the rest stays queued as it
   * is. Walking (and copying) the whole queue for every request made a backlog costlier the
   * longer it grew, worst when most of it was keys in flight (the load generator at 100k tx/s: a
   * third of its CPU here, and falling further behind). Stopping early never breaks the order,
   * only takes less: a message passed over is skipped as any blocked one is, and every lane that
   * finishes takes again. Nor is the unscanned rest copied: the messages passed over go back into
   * the slots just before it, so a request costs what it scanned, not what is queued: a backlog
   * of 400,000 messages (50,000 keys, 5 lanes, requests of 3,000) drained in 205–252 ms instead
   * of 673–730, and 100,000 in 61–86 instead of 101–124 (the copy grew with the backlog).
   */
  #take(): Queued<M>[] {
    const queue = this.#queue;
    const taken: Queued<M>[] = [];
    const kept: Queued<M>[] = [];
    const blocked = new Set<string>();
    const end = Math.min(queue.length, this.#head + MAX_SCAN);
    let bytes = 0;
    let i = this.#head;
    for (; i < end; i++) {
      const q = queue[i]!;
      if (blocked.has(q.key) || this.#keysInFlight.has(q.key)) {
        blocked.add(q.key);
        kept.push(q);
        continue;
      }
      if (taken.length > 0 && (taken.length >= this.#maxMessages || bytes + q.bytes > this.#maxBytes)) break;
      bytes += q.bytes;
      taken.push(q);
    }
    for (const q of taken) this.#keysInFlight.set(q.key, (this.#keysInFlight.get(q.key) ?? 0) + 1);
    if (taken.length > 0) {
      // Slots head…i-1 held what was scanned: the passed-over messages take the last of them, in order.
      let at = i - kept.length;
      this.#head = at;
      for (const q of kept) queue[at++] = q;
      // The spent prefix is dropped once it is most of the array: amortised O(1) per message.
      if (this.#head >= SPENT_BEFORE_COMPACTING && this.#head * 2 >= queue.length) {
        queue.splice(0, this.#head);
        this.#head = 0;
      }
    }
    return taken;
  }

  async #run(lane: number, request: Queued<M>[]): Promise<void> {
    this.#busy[lane] = true;
    try {
      await this.#send(
        request.map((q) => q.message),
        lane,
      );
      this.#release(request);
      for (const q of request) this.#settleOne(q.publish);
    } catch (err) {
      this.#release(request);
      // A publish with a part refused is refused whole: its parts still queued are not sent.
      for (const q of request) q.publish.failed ??= err;
      for (const q of request) this.#settleOne(q.publish);
      const kept: Queued<M>[] = [];
      for (let i = this.#head; i < this.#queue.length; i++) {
        const q = this.#queue[i]!;
        if (q.publish.failed === undefined) kept.push(q);
        else this.#settleOne(q.publish);
      }
      this.#queue = kept;
      this.#head = 0;
    }
    this.#busy[lane] = false;
    this.#pump();
  }

  #release(request: readonly Queued<M>[]): void {
    for (const q of request) {
      const n = this.#keysInFlight.get(q.key)! - 1;
      if (n === 0) this.#keysInFlight.delete(q.key);
      else this.#keysInFlight.set(q.key, n);
    }
  }

  #settleOne(publish: Publish): void {
    if (--publish.left > 0) return;
    if (publish.failed === undefined) publish.resolve();
    else publish.reject(publish.failed);
  }
}
