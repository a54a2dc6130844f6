import {
  AuthenticationError,
  MultipleErrors,
  NetworkError,
  ProtocolError,
  UserError,
} from "@platformatic/kafka";
import { describe, expect, it } from "vitest";
import {
  innermostReasons,
  isGoneBrokerError,
  isRetriableClientError,
  isStaleLeaderError,
  isTopicAlreadyExists,
  nonRetriableClientError,
} from "../../src/stream/kafka/clientErrorKind.js";

const context = {
  settings: {
    brokers: ["127.0.0.1:9093"],
    clientId: "fraud-scorer",
    sasl: { mechanism: "scram-sha-512" as const, username: "scorer", password: "s3cret-pw" },
    ssl: { enabled: true, caFile: "/etc/ca.pem" },
  },
  groupId: "scorers",
  groupInstanceId: "scorer-1",
};

/** The shape the client reports after its retries: each call's attempts wrapped again. */
const afterRetries = (cause: Error) =>
  new MultipleErrors("joinGroup failed 6 times.", [
    new MultipleErrors("Cannot connect to any broker.", [
      new NetworkError("Connection to 127.0.0.1:9093 failed.", { cause }),
    ]),
  ]);

describe("a Kafka client failure no retry cures", () => {
  it("names a SASL rejection deep in retried connection errors, and not the password", () => {
    const err = nonRetriableClientError(
      afterRetries(new AuthenticationError("SASL authentication failed.")),
      context,
    );
    expect(err?.kind).toBe("auth_failed");
    expect(err?.message).toMatch(/SASL authentication failed for user "scorer"/);
    expect(err?.message).toContain("KAFKA_SASL_PASSWORD");
    expect(err?.message).not.toContain("s3cret-pw");
  });

  it("names a broker certificate the configured CA does not vouch for", () => {
    const tls = Object.assign(new Error("self-signed certificate in certificate chain"), {
      code: "SELF_SIGNED_CERT_IN_CHAIN",
    });
    const err = nonRetriableClientError(afterRetries(tls), context);
    expect(err?.kind).toBe("tls_untrusted");
    expect(err?.message).toContain("/etc/ca.pem");
  });

  it("names a static instance id still held by a gone member (KIP-848)", () => {
    const err = nonRetriableClientError(
      new MultipleErrors("consumerGroupHeartbeat failed.", [new ProtocolError("UNRELEASED_INSTANCE_ID")]),
      context,
    );
    expect(err?.kind).toBe("instance_id_in_use");
    expect(err?.message).toContain('"scorer-1"');
  });

  it("leaves a refused connection to the client's retries", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    expect(nonRetriableClientError(afterRetries(refused), context)).toBeUndefined();
  });
});

describe("a publish failure says why", () => {
  it("names the distinct innermost reasons under the client's wrapping", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    const notLeader = Object.assign(new Error("This server is not the leader"), {
      apiId: "NOT_LEADER_OR_FOLLOWER",
    });
    const wrapped = new MultipleErrors("Producing messages failed.", [
      new MultipleErrors("produce failed 3 times.", [notLeader, notLeader, refused]),
    ]);
    expect(innermostReasons(wrapped)).toBe("NOT_LEADER_OR_FOLLOWER; connect ECONNREFUSED");
  });
});

describe("a send that failed on a moved leader", () => {
  const notLeader = Object.assign(new Error("This server is not the leader"), {
    apiId: "NOT_LEADER_OR_FOLLOWER",
  });
  const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });

  it("is recognised under the client's wrapping", () => {
    const wrapped = new MultipleErrors("Producing messages failed.", [
      new MultipleErrors("produce failed 3 times.", [refused, notLeader]),
    ]);
    expect(isStaleLeaderError(wrapped)).toBe(true);
  });

  it("is not any other failure", () => {
    const wrapped = new MultipleErrors("Producing messages failed.", [
      new MultipleErrors("produce failed 3 times.", [refused]),
    ]);
    expect(isStaleLeaderError(wrapped)).toBe(false);
    expect(isStaleLeaderError(new Error("MESSAGE_TOO_LARGE"))).toBe(false);
  });
});

describe("a fetch or send failure the client would retry", () => {
  const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });

  it("is a broker that refused connections or a moved leader, under the client's wrapping", () => {
    expect(isRetriableClientError(afterRetries(refused))).toBe(true);
    const moved = new MultipleErrors("fetch failed 6 times.", [new ProtocolError("NOT_LEADER_OR_FOLLOWER")]);
    expect(isRetriableClientError(moved)).toBe(true);
  });

  it("is not one the client marks final anywhere in the tree", () => {
    const outOfRange = new MultipleErrors("fetch failed 1 times.", [
      refused,
      new ProtocolError("OFFSET_OUT_OF_RANGE"),
    ]);
    expect(isRetriableClientError(outOfRange)).toBe(false);
    expect(isRetriableClientError(afterRetries(new AuthenticationError("SASL authentication failed.")))).toBe(
      false,
    );
  });
});

describe("a fetch sent to a broker the cluster no longer lists", () => {
  it("is recognised under the client's wrapping", () => {
    const gone = new MultipleErrors("fetch failed 3 times.", [
      new NetworkError("Connection to 127.0.0.1:9093 failed."),
      new UserError("Cannot find broker with node id 2"),
    ]);
    expect(isGoneBrokerError(gone)).toBe(true);
  });

  it("is not any other user error", () => {
    expect(
      isGoneBrokerError(new UserError("Cannot specify both onCorruptedMessage and onDeserializationError.")),
    ).toBe(false);
    expect(isGoneBrokerError(new Error("Cannot find broker with node id 2"))).toBe(false);
  });
});

describe("a topic creation that lost the race to another instance", () => {
  const exists = Object.assign(new Error("Topic with this name already exists."), {
    apiId: "TOPIC_ALREADY_EXISTS",
  });
  const invalid = Object.assign(new Error("Number of partitions is invalid."), {
    apiId: "INVALID_PARTITIONS",
  });

  it("is recognised when every refusal says the topic exists", () => {
    expect(isTopicAlreadyExists(new MultipleErrors("Creating topics failed.", [exists]))).toBe(true);
  });

  it("is not a refusal for anything else, alone or beside it", () => {
    expect(isTopicAlreadyExists(new MultipleErrors("Creating topics failed.", [exists, invalid]))).toBe(
      false,
    );
    expect(isTopicAlreadyExists(new Error("connect ECONNREFUSED"))).toBe(false);
  });
});
