// Which client failures no retry can cure. The client wraps a broker's SASL rejection and a TLS
// handshake's certificate error in a retriable NetworkError (and those in MultipleErrors per
// retried call), so it would retry a wrong password or an untrusted CA until its budget runs out
// and then report "Cannot connect to any broker". We look through the wrapping for the cause
// and name it, so start-up stops at once with a line that says what to check.
import { KafkaPortError } from "../kafkaPort.js";
import type { KafkaConnectionSettings } from "./clientOptions.js";

/** Node's codes for a peer certificate that the configured CAs (or host name) do not vouch for. */
const UNTRUSTED_CERTIFICATE_CODES = new Set([
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "CERT_SIGNATURE_FAILURE",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

const isAuthenticationFailure = (e: ErrorLike) => e.code === "PLT_KFK_AUTHENTICATION";
const isUntrustedCertificate = (e: ErrorLike) =>
  typeof e.code === "string" && UNTRUSTED_CERTIFICATE_CODES.has(e.code);
/** KIP-848: a static member's instance id is still held by a member the broker has not released. */
const isUnreleasedInstanceId = (e: ErrorLike) => e.apiId === "UNRELEASED_INSTANCE_ID";
/** Another live member joined with the same group.instance.id and took our place. */
const isFencedInstanceId = (e: ErrorLike) => e.apiId === "FENCED_INSTANCE_ID";

/** Leadership moved (a broker died or was restarted): the request went to a broker that no longer leads. */
const STALE_LEADER_CODES = new Set(["NOT_LEADER_OR_FOLLOWER", "LEADER_NOT_AVAILABLE", "FENCED_LEADER_EPOCH"]);

/** A send failed because a partition's leader moved, anywhere in the error's tree. */
export function isStaleLeaderError(error: unknown): boolean {
  for (const e of errorTree(error))
    if (typeof e.apiId === "string" && STALE_LEADER_CODES.has(e.apiId)) return true;
  return false;
}

/** Every broker error in the tree says the topic already exists (another instance created it first). */
export function isTopicAlreadyExists(error: unknown): boolean {
  return everyInnermostErrorIs(error, "TOPIC_ALREADY_EXISTS");
}

/**
 * Every broker error in the tree says a transaction is still completing (the coordinator is
 * writing the last one's commit markers when the next one asks to add partitions).
 */
export function isConcurrentTransactions(error: unknown): boolean {
  return everyInnermostErrorIs(error, "CONCURRENT_TRANSACTIONS");
}

/** The tree has innermost errors, and each is the broker's `apiId`. */
function everyInnermostErrorIs(error: unknown, apiId: string): boolean {
  let seen = false;
  for (const e of errorTree(error)) {
    if (e.cause !== undefined || (Array.isArray(e.errors) && e.errors.length > 0)) continue;
    if (e.apiId !== apiId) return false;
    seen = true;
  }
  return seen;
}

/**
 * A request named a topic the cluster does not have (and was not asked to create it): the
 * broker's error code, or the client's own refusal after a metadata answer without the topic.
 */
export function isUnknownTopicError(error: unknown): boolean {
  for (const e of errorTree(error)) {
    if (e.apiId === "UNKNOWN_TOPIC_OR_PARTITION") return true;
    if (e.code === "PLT_KFK_USER" && String(e.message).startsWith("Unknown topic")) return true;
  }
  return false;
}

/**
 * The client would retry it: no error in its tree says otherwise (a broker that is down, a
 * leader that moved). The client's own test, applied after its retries have run out.
 */
export function isRetriableClientError(error: unknown): boolean {
  for (const e of errorTree(error)) if (e.canRetry === false) return false;
  return true;
}

/**
 * A fetch sent to a broker the cluster no longer lists: once a dead broker is fenced, the client
 * still sends a fetch whose partitions now have different leaders to its first choice, the gone
 * broker, and fails it at once as a user error, which it never retries.
 */
export function isGoneBrokerError(error: unknown): boolean {
  for (const e of errorTree(error))
    if (e.code === "PLT_KFK_USER" && String(e.message).startsWith("Cannot find broker with node id"))
      return true;
  return false;
}

interface ErrorLike {
  readonly canRetry?: unknown;
  readonly code?: unknown;
  readonly apiId?: unknown;
  readonly message?: unknown;
  readonly cause?: unknown;
  readonly errors?: unknown;
}

/** Every error in a client error's tree: itself, its causes and aggregated errors. */
function* errorTree(error: unknown, depth = 0): Generator<ErrorLike> {
  if (depth > 16 || error === null || typeof error !== "object") return;
  const e = error as ErrorLike;
  yield e;
  if (e.cause !== undefined) yield* errorTree(e.cause, depth + 1);
  if (Array.isArray(e.errors)) for (const inner of e.errors) yield* errorTree(inner, depth + 1);
}

/**
 * The distinct innermost reasons of a client error (the broker's error code where there is one),
 * at most `max`: the client's own message only says "Producing messages failed." after every retry.
 */
export function innermostReasons(error: unknown, max = 3): string {
  const reasons = new Set<string>();
  for (const e of errorTree(error)) {
    if (e.cause !== undefined || (Array.isArray(e.errors) && e.errors.length > 0)) continue;
    reasons.add(typeof e.apiId === "string" ? e.apiId : String(e.message));
    if (reasons.size >= max) break;
  }
  return [...reasons].join("; ");
}

export interface ClientErrorContext {
  readonly settings: KafkaConnectionSettings;
  readonly groupId?: string | undefined;
  readonly groupInstanceId?: string | undefined;
}

/**
 * The KafkaPortError for a failure no retry can cure, or undefined when the client's retries
 * (or a restart) may still get through. The message names what failed and what to check,
 * never a secret.
 */
export function nonRetriableClientError(
  error: unknown,
  context: ClientErrorContext,
): KafkaPortError | undefined {
  const { settings } = context;
  const brokers = settings.brokers.join(",");
  for (const e of errorTree(error)) {
    if (isAuthenticationFailure(e)) {
      const sasl = settings.sasl;
      const who = sasl ? `user "${sasl.username}" (${sasl.mechanism.toUpperCase()})` : "this client";
      return new KafkaPortError(
        "auth_failed",
        `Kafka SASL authentication failed for ${who} at ${brokers}: check KAFKA_SASL_USERNAME, ` +
          "KAFKA_SASL_PASSWORD and KAFKA_SASL_MECHANISM against the broker's users",
        { cause: error },
      );
    }
    if (isUntrustedCertificate(e)) {
      const ca = settings.ssl?.caFile ?? "Node's default CA store";
      return new KafkaPortError(
        "tls_untrusted",
        `the certificate of Kafka broker ${brokers} is not trusted (${String(e.code)}: ${String(e.message)}): ` +
          `check KAFKA_SSL_CA_FILE (now ${ca}) holds the CA that signed it and the broker's host name matches`,
        { cause: error },
      );
    }
    if (isUnreleasedInstanceId(e))
      return new KafkaPortError(
        "instance_id_in_use",
        `group "${context.groupId}" still holds group.instance.id "${context.groupInstanceId}" for a member ` +
          "that is gone: wait for the broker's session timeout to release it, or start with another " +
          "KAFKA_GROUP_INSTANCE_ID",
        { cause: error },
      );
    if (isFencedInstanceId(e))
      return new KafkaPortError(
        "fenced",
        `another member of group "${context.groupId}" joined with group.instance.id ` +
          `"${context.groupInstanceId}": give each instance its own KAFKA_GROUP_INSTANCE_ID`,
        { cause: error },
      );
  }
  return undefined;
}
