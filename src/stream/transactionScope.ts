// Exactly-once mode: the decisions and dead letters of one delivery, and that delivery's
// consumed offsets, go into one Kafka transaction. The transaction opens with the first record
// published and closes when the consumer commits the delivery; read_committed readers see all
// of it or, after a crash, none of it (the restarted instance re-decides those records).
import type { OutgoingRecord, RecordBatch, SinkTransaction, TransactionalSink } from "./kafkaPort.js";

export class TransactionScope {
  readonly #sink: TransactionalSink;
  #open: Promise<SinkTransaction> | undefined;
  #sending: Promise<unknown> = Promise.resolve();

  constructor(sink: TransactionalSink) {
    this.#sink = sink;
  }

  /** Publishes into the open transaction (opening one if none is open). */
  readonly publish = async (records: readonly OutgoingRecord[]): Promise<void> => {
    if (records.length === 0) return;
    const transaction = this.#current();
    // One send at a time: measured on Kafka 4.3, concurrent sends into one transaction fail
    // with TRANSACTION_ABORTABLE (a partition written before the client had added it).
    const sent = this.#sending.then(async () => (await transaction).publish(records));
    this.#sending = sent.catch(() => undefined);
    await sent;
  };

  /** Commits everything published since the last commit together with these offsets. */
  async commit(consumed: readonly RecordBatch[]): Promise<void> {
    const transaction = await this.#current();
    this.#open = undefined;
    await transaction.commit(consumed);
  }

  close(): Promise<void> {
    return this.#sink.close();
  }

  #current(): Promise<SinkTransaction> {
    this.#open ??= this.#sink.begin();
    return this.#open;
  }
}
