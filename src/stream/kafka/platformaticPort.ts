// The Kafka port on @platformatic/kafka (pure JavaScript; static membership, the KIP-848
// consumer protocol and transactions). Chosen by the bench's client section: see README.
import { randomUUID } from "node:crypto";
import { Admin, FetchIsolationLevels, Producer, type ConsumeOptions } from "@platformatic/kafka";
import type {
  GroupSourceOptions,
  IsolationLevel,
  KafkaPort,
  RecordSink,
  RecordSource,
  SinkOptions,
  TopicAdmin,
  TopicReadOptions,
  TransactionalSink,
  TransactionalSinkOptions,
} from "../kafkaPort.js";
import { KafkaPortError } from "../kafkaPort.js";
import { baseClientOptions, type KafkaConnectionSettings } from "./clientOptions.js";
import { nonRetriableClientError } from "./clientErrorKind.js";
import { LeaderFollowingConsumer } from "./leaderFollowingConsumer.js";
import { PlatformaticAdmin, translatingAdminErrors } from "./platformaticAdmin.js";
import { PlatformaticSink, PlatformaticTransactionalSink, producerOptions } from "./platformaticSink.js";
import { PlatformaticSource } from "./platformaticSource.js";

const isolationLevel = (level: IsolationLevel | undefined) =>
  level === "read_committed" ? FetchIsolationLevels.READ_COMMITTED : FetchIsolationLevels.READ_UNCOMMITTED;

// An idle fetch returns after this long; the broker answers at once when a byte is there.
// Lag is for dashboards and alerts: a few seconds old is fresh enough, and each look costs a
// ListOffsets round trip.
const DEFAULT_LAG_INTERVAL_MS = 5_000;
const DEFAULT_MAX_WAIT_MS = 250;
const DEFAULT_BUFFERED_RECORDS = 2_048;
// The client's own rebalance timeout when none is given (@platformatic/kafka's default).
const CLIENT_REBALANCE_TIMEOUT_MS = 102_000;
// At most 1 MiB per fetch (some 8,000 transactions of 127 bytes), for all partitions together.
// The client turns a whole fetch response into JavaScript objects at once (per record: the
// message, its offset and timestamp as BigInts, a bound commit function, a header Map, the key
// and value Buffers), and they live until the scorer has taken them. At 8 MiB (the setting
// until 2026-12-05), a heap snapshot of serve draining bench section 6's backlog held about
// 36,000 such records, and every young-generation collection copied them. (The collector still
// takes about a sixth of the main thread's time in that drain, 17 % of a CPU profile's samples
// at 8 MiB and 16 % at 1 MiB: what it copies now is mostly the scorer's own work in hand.) Java's
// client decodes lazily, as records are polled, so its 50 MiB default does not carry over.
// Measured in section 6's rounds (a second scorer beside serve, the order reversed every other
// round; AMD EPYC, 2 vCPUs, 2026-12-05): with 1 MiB serve spent 29.0 / 29.2 / 28.7 µs of CPU per
// record in three runs against 32.1 / 32.6 / 35.4 at 8 MiB, and drained 32.5k records/s in each
// against 28.8k–31.6k; with the two swapped, 30.6 / 36.9 / 30.4 against 36.0 / 41.2 / 37.7. Its
// young-generation pauses fell from 1.8 to 1.3–1.4 s per drain of 300,000 (--trace-gc-nvp), the
// bytes promoted from ~510 to ~350 MB. The passthrough on this port drained 105k–110k records/s
// at 10.6–11.5 µs per record, where it had drained 79k–92k at 13.0–13.8 that day at 8 MiB.
// 512 KiB showed no further gain.
const FETCH_BYTES = { maxBytesPerPartition: 1_048_576, maxBytes: 1_048_576 } as const;
// Produce requests a sink keeps in flight, one per idempotent producer (the client allows one
// each): Kafka's own cap for an idempotent producer's requests in flight. At +50 ms each way and
// 1,000 tx/s, one in flight made a decision wait up to a whole round trip for the request before.
const SINK_REQUESTS_IN_FLIGHT = 5;

/**
 * A member learns of a rebalance from its next heartbeat's answer, and the broker completes the
 * join only when every member has rejoined: the members that learned first hold their
 * partitions (no hand-over during a classic rebalance) while the last one's heartbeat is due.
 * One every third of a 10 s session made that hold up to 3.3 s (the rebalances scenario's
 * longest stall, 3.4 s); one a second bounds it at 1 s, for a heartbeat a second per member.
 * Never more than a third of the session: two may be lost before the broker gives up.
 */
const MAX_HEARTBEAT_INTERVAL_MS = 1_000;
export const heartbeatIntervalMs = (sessionTimeoutMs: number): number =>
  Math.max(100, Math.min(MAX_HEARTBEAT_INTERVAL_MS, Math.floor(sessionTimeoutMs / 3)));

export function createPlatformaticPort(settings: KafkaConnectionSettings): KafkaPort {
  return {
    groupSource(options: GroupSourceOptions): RecordSource {
      const protocol = options.groupProtocol ?? "classic";
      const rebalanceTimeoutMs =
        options.sessionTimeoutMs !== undefined
          ? Math.max(options.sessionTimeoutMs, 30_000)
          : CLIENT_REBALANCE_TIMEOUT_MS;
      const group =
        protocol === "consumer"
          ? { groupProtocol: "consumer" as const }
          : {
              groupProtocol: "classic" as const,
              ...(options.sessionTimeoutMs !== undefined
                ? {
                    sessionTimeout: options.sessionTimeoutMs,
                    heartbeatInterval: heartbeatIntervalMs(options.sessionTimeoutMs),
                    rebalanceTimeout: rebalanceTimeoutMs,
                    // Unanswered for a whole session, the broker has dropped us: stop, don't hang on.
                    heartbeatStallTimeout: options.sessionTimeoutMs,
                  }
                : {}),
            };
      const consumer = new LeaderFollowingConsumer({
        ...baseClientOptions(settings, "consumer"),
        groupId: options.groupId,
        ...(options.groupInstanceId !== undefined ? { groupInstanceId: options.groupInstanceId } : {}),
        ...group,
      });
      const bufferedRecords = options.bufferedRecords ?? DEFAULT_BUFFERED_RECORDS;
      const consume: ConsumeOptions<Buffer, Buffer, Buffer, Buffer> = {
        ...FETCH_BYTES,
        topics: [...options.topics],
        mode: "committed",
        fallbackMode: options.startWithoutCommit ?? "earliest",
        autocommit: false,
        isolationLevel: isolationLevel(options.isolation),
        maxWaitTime: options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
        highWaterMark: bufferedRecords,
      };
      return new PlatformaticSource({
        consumer,
        consume,
        maxRecordsPerHandover: bufferedRecords,
        commits: true,
        rebalanceHoldMs: protocol === "classic" ? rebalanceTimeoutMs : undefined,
        errorContext: { settings, groupId: options.groupId, groupInstanceId: options.groupInstanceId },
        onEvent: options.onEvent,
        lag:
          options.onLag !== undefined
            ? { onLag: options.onLag, intervalMs: options.lagIntervalMs ?? DEFAULT_LAG_INTERVAL_MS }
            : undefined,
      });
    },

    topicReader(options: TopicReadOptions): RecordSource {
      // A group of its own that never commits: reading must not move anyone's offsets.
      const consumer = new LeaderFollowingConsumer({
        ...baseClientOptions(settings, "reader"),
        groupId: `fraud-scorer-reader-${randomUUID()}`,
      });
      const base = {
        ...FETCH_BYTES,
        highWaterMark: DEFAULT_BUFFERED_RECORDS,
        topics: [options.topic],
        autocommit: false,
        isolationLevel: isolationLevel(options.isolation),
        maxWaitTime: options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
      };
      const consume: ConsumeOptions<Buffer, Buffer, Buffer, Buffer> =
        options.from === "earliest" || options.from === "latest"
          ? { ...base, mode: options.from }
          : {
              ...base,
              mode: "manual",
              offsets: [...options.from].map(([partition, offset]) => ({
                topic: options.topic,
                partition,
                offset: BigInt(offset),
              })),
            };
      return new PlatformaticSource({
        consumer,
        consume,
        maxRecordsPerHandover: DEFAULT_BUFFERED_RECORDS,
        commits: false,
        onEvent: options.onEvent,
        errorContext: { settings },
      });
    },

    sink(options: SinkOptions = {}): RecordSink {
      // The client's own retries stay short (a stuck request would hold its lane's sends); the
      // sink sends a request again for the rest of the window (platformaticSink.ts). Producers
      // are connected and given their ids on first use: a lane only opens once the ones before
      // it are busy.
      const base = baseClientOptions(settings, "producer");
      return new PlatformaticSink(
        Array.from({ length: SINK_REQUESTS_IN_FLIGHT }, () => new Producer(producerOptions(base))),
        { retryForMs: options.retryForMs, maxRequestBytes: options.maxRequestBytes },
      );
    },

    transactionalSink({ transactionalId, source }: TransactionalSinkOptions): TransactionalSink {
      if (!(source instanceof PlatformaticSource))
        throw new KafkaPortError("not_found", "a transactional sink needs a group source of the same port");
      const producer = new Producer<Buffer, Buffer, Buffer, Buffer>({
        ...producerOptions(baseClientOptions(settings, "transactional-producer")),
        transactionalId,
        // A restart's InitProducerId waits (CONCURRENT_TRANSACTIONS) while the broker aborts the
        // killed predecessor's open transaction; on a loaded broker that takes seconds.
        retries: 40,
      });
      return new PlatformaticTransactionalSink(producer, source);
    },

    admin(): TopicAdmin {
      return translatingAdminErrors(
        new PlatformaticAdmin(new Admin(baseClientOptions(settings, "admin"))),
        (err) => nonRetriableClientError(err, { settings }) ?? err,
      );
    },
  };
}
