// A Consumer whose fetches follow partition leaders that move while a broker is away.
//
// @platformatic/kafka 2.12's messages stream groups the owned partitions by leader, sends one
// fetch per broker and destroys itself on any fetch error but an offset out of range. The
// fetch retries on its own, but only towards one broker: once the dead broker's partitions
// have new leaders on two different brokers, every retry goes back to the dead one (its
// fallback node) until the retries run out, the stream fails and the scorer exits. In the
// three-brokers chaos scenario (one of three brokers SIGKILLed) a partition stalled 127 s
// through those exits and restarts.
//
// Once the dead broker is fenced and no longer listed, that same fetch fails at once with
// "Cannot find broker with node id", which the client never retries (three-brokers again: the
// scorer exited about 3 s after the kill).
//
// Here a fetch that failed in a way the client would retry, or on a broker no longer listed,
// ends as an empty fetch instead, after forgetting the cached metadata: the stream then
// fetches again straight away, grouped by the leaders the controller has elected since. Offsets are the stream's own and have not
// moved (an empty fetch pushes nothing), so no record is skipped and none is read twice. No
// fetch getting through for longer than BROKER_AWAY_MS (the whole cluster gone) still fails
// the stream, as a publish failing that long would: the process stops and is restarted.
//
// Each of the stream's fetch rounds starts with a metadata request, and a failed one destroys
// the stream too: with the only broker away (broker-restart) the scorer exited 1.5 s into the
// outage and lost 11 s to a restart. That request is asked again, RETRY_DELAY_MS apart, within
// the same BROKER_AWAY_MS.
import {
  Consumer,
  type CallbackWithPromise,
  type ClusterMetadata,
  type FetchOptions,
  type MetadataOptions,
} from "@platformatic/kafka";
import { BROKER_AWAY_MS } from "../kafkaPort.js";
import { isGoneBrokerError, isRetriableClientError } from "./clientErrorKind.js";
import { RETRY_DELAY_MS } from "./clientOptions.js";

type Options = FetchOptions<Buffer, Buffer, Buffer, Buffer>;
type FetchResponse = Awaited<ReturnType<Consumer<Buffer, Buffer, Buffer, Buffer>["fetch"]>>;

/** What the stream reads as "nothing new": no topic, so it pushes nothing and moves no offset. */
const noRecords = (): FetchResponse => ({ throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: [] });

export class LeaderFollowingConsumer extends Consumer<Buffer, Buffer, Buffer, Buffer> {
  /** When fetches started failing without a success since (Date.now()); undefined when they succeed. */
  #failingSince: number | undefined;

  override fetch(options: Options, callback: CallbackWithPromise<FetchResponse>): void;
  override fetch(options: Options): Promise<FetchResponse>;
  override fetch(
    options: Options,
    callback?: CallbackWithPromise<FetchResponse>,
  ): Promise<FetchResponse> | void {
    // The stream always passes a callback; a direct promise-style call keeps the client's behaviour.
    if (callback === undefined) return super.fetch(options);
    super.fetch(options, (error, response) => {
      if (error === null || error === undefined) {
        this.#failingSince = undefined;
        callback(null, response);
        return;
      }
      const now = Date.now();
      this.#failingSince ??= now;
      const reissue = isRetriableClientError(error) || isGoneBrokerError(error);
      if (!reissue || now - this.#failingSince > BROKER_AWAY_MS) {
        callback(error, response);
        return;
      }
      // The next fetch asks for metadata again: the leaders elected since the broker went away.
      this.clearMetadata();
      callback(null, noRecords());
    });
  }

  override metadata(options: MetadataOptions, callback: CallbackWithPromise<ClusterMetadata>): void;
  override metadata(options: MetadataOptions): Promise<ClusterMetadata>;
  override metadata(
    options: MetadataOptions,
    callback?: CallbackWithPromise<ClusterMetadata>,
  ): Promise<ClusterMetadata> | void {
    if (callback === undefined) return super.metadata(options);
    const giveUpAt = Date.now() + BROKER_AWAY_MS;
    const ask = (): void =>
      super.metadata(options, (error, metadata) => {
        // A closed client answers with an error it marks final: nothing is asked again then.
        if (error && isRetriableClientError(error) && Date.now() < giveUpAt) {
          setTimeout(ask, RETRY_DELAY_MS).unref();
          return;
        }
        callback(error, metadata);
      });
    ask();
  }
}
