// Our wire format checked from outside, with independent clients: Debian's kcat (librdkafka)
// and protoc (Google's Protobuf compiler), in both directions.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { parseConfluentFrame } from "../../src/codec/confluent.js";
import { splitDelimitedFrames } from "../../src/codec/delimited.js";
import { decodeDecisionPayload } from "../../src/codec/messages.js";
import { SchemaRegistry, TRANSACTION_TYPE } from "../../src/codec/schemaRegistry.js";
import { decodeTransactionRecord } from "../../src/ingest/decodeTransactionRecord.js";
import { testEndpoints } from "./endpoints.js";
import { DecisionsCollector } from "./support/decisionsCollector.js";
import { createTestTopics, testKafka, type TestTopics } from "./support/kafkaTestTopics.js";
import { ScorerChild } from "../../src/tools/scorerChild.js";
import { scorerEnv } from "./support/scorerEnv.js";
import { delimitedRecord, makeTransactions } from "./support/transactionTraffic.js";
import { randomBytes } from "node:crypto";

const run = promisify(execFile);
const endpoints = testEndpoints();
const PROTO_ROOT = "proto";
const TRANSACTION_PROTO = "fraud/v1/transaction.proto";
const DECISION_PROTO = "fraud/v1/decision.proto";

/** kcat: every record value of a topic, from the beginning (`%S` is the value's byte size). */
async function kcatValues(topic: string): Promise<Buffer[]> {
  const { stdout } = await run(
    "kcat",
    ["-C", "-b", endpoints.kafkaBrokers, "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%S:%s"],
    { encoding: "buffer", maxBuffer: 1 << 22 },
  );
  const values: Buffer[] = [];
  for (let at = 0; at < stdout.length;) {
    const colon = stdout.indexOf(0x3a, at);
    const size = Number(stdout.subarray(at, colon).toString("ascii"));
    values.push(stdout.subarray(colon + 1, colon + 1 + size));
    at = colon + 1 + size;
  }
  return values;
}

const confluentPayload = (value: Buffer): Buffer => {
  const frame = parseConfluentFrame(value);
  return frame.ok ? Buffer.from(frame.value.payload) : Buffer.alloc(0);
};

/** protoc --decode with our .proto: the message as protoc's text format. */
async function protocDecode(type: string, proto: string, payload: Buffer, dir: string): Promise<string> {
  const file = join(dir, `payload-${randomBytes(4).toString("hex")}.bin`);
  await writeFile(file, payload);
  const { stdout } = await run("sh", ["-c", `protoc --decode=${type} -I ${PROTO_ROOT} ${proto} < ${file}`]);
  return stdout;
}

let dir: string;
let topics: TestTopics;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "interop-"));
  topics = await createTestTopics(endpoints.kafkaBrokers, "interop", 1);
  const versions = await Promise.all([run("kcat", ["-V"]), run("protoc", ["--version"])]);
  console.log(`interop: ${versions[0].stdout.split("\n")[0]} · ${versions[1].stdout.trim()}`);
});

describe("wire format checked with kcat and protoc", () => {
  it("kcat reads a record we produced and protoc decodes its payload with our .proto", async () => {
    const [tx] = makeTransactions(1, { cards: 1, prefix: "interop-out" });
    const producer = testKafka(endpoints.kafkaBrokers).sink();
    await producer.publish([{ topic: topics.transactions, key: tx!.cardId, value: delimitedRecord(tx!) }]);
    await producer.close();

    const [value] = await kcatValues(topics.transactions);
    const frames = splitDelimitedFrames(value!);
    expect(frames.ok).toBe(true);
    const text = await protocDecode(
      "fraud.v1.Transaction",
      TRANSACTION_PROTO,
      Buffer.from(frames.ok ? frames.value[0]! : []),
      dir,
    );
    expect(text).toContain(`transaction_id: "${tx!.transactionId}"`);
    expect(text).toContain(`card_id: "${tx!.cardId}"`);
    expect(text).toContain(`amount_minor: ${tx!.amountMinor}`);
    expect(text).toContain(`event_time_ms: ${tx!.eventTimeMs}`);
  });

  it("a record written by protoc --encode and kcat is decided by our scorer, and protoc reads the decision", async () => {
    const eventTimeMs = Date.now() - 1_000;
    const textFormat = [
      `transaction_id: "kcat-1"`,
      `card_id: "card-kcat"`,
      `amount_minor: 2599`,
      `currency: "EUR"`,
      `merchant_id: "m-books"`,
      `mcc: 5942`,
      `merchant_country: "DE"`,
      `card_country: "DE"`,
      `channel: CHANNEL_ECOMMERCE`,
      `device_id: "dev-kcat"`,
      `ip: "192.0.2.17"`,
      `event_time_ms: ${eventTimeMs}`,
    ].join("\n");
    const textFile = join(dir, "tx.txt");
    const binFile = join(dir, "tx.bin");
    await writeFile(textFile, textFormat);
    await run("sh", [
      "-c",
      `protoc --encode=fraud.v1.Transaction -I ${PROTO_ROOT} ${TRANSACTION_PROTO} < ${textFile} > ${binFile}`,
    ]);
    const payload = await readFile(binFile);
    expect(payload.length).toBeLessThan(128); // so the delimited length prefix is one byte
    const recordFile = join(dir, "record.bin");
    await writeFile(recordFile, Buffer.concat([Buffer.from([payload.length]), payload]));

    // Our decoder, on exactly those bytes.
    const decoded = decodeTransactionRecord(await readFile(recordFile), { transactionSchemaIds: new Set() });
    expect(decoded.ok && decoded.value[0]!.tx.amountMinor).toBe(2599);

    // kcat sends the file as one record; the scorer decides it.
    const decisions = new DecisionsCollector(endpoints.kafkaBrokers, topics.decisions);
    await decisions.start();
    const scorer = await ScorerChild.start({
      env: scorerEnv(endpoints, topics, randomBytes(32).toString("hex")),
    });
    try {
      await run("kcat", [
        "-P",
        "-b",
        endpoints.kafkaBrokers,
        "-t",
        topics.transactions,
        "-k",
        "card-kcat",
        recordFile,
      ]);
      await decisions.waitFor(
        () => decisions.decisions().some((d) => d.transactionId === "kcat-1"),
        60_000,
        "kcat-1",
      );
    } finally {
      await scorer.stop("SIGTERM");
      await decisions.stop();
    }
    expect(decisions.byTransaction.get("kcat-1")?.cardId).toBe("card-kcat");

    // The decision itself, read back by kcat and decoded by protoc after the Confluent header
    // (magic byte, schema id, message-index [0]) whose schema id the registry resolves.
    const ours = (await kcatValues(topics.decisions)).find((value) => {
      const decision = decodeDecisionPayload(confluentPayload(value));
      return decision.ok && decision.value.transactionId === "kcat-1";
    });
    expect(ours).toBeDefined();
    const decisionText = await protocDecode(
      "fraud.v1.Decision",
      DECISION_PROTO,
      confluentPayload(ours!),
      dir,
    );
    expect(decisionText).toContain(`transaction_id: "kcat-1"`);
    expect(decisionText).toMatch(/action: ACTION_(APPROVE|REVIEW|DECLINE)/);
    const schemaId = ours!.readUInt32BE(1);
    const registry = new SchemaRegistry({ url: endpoints.schemaRegistryUrl });
    expect(await registry.firstMessageType(schemaId)).toBe("fraud.v1.Decision");
    expect(await registry.firstMessageType(schemaId)).not.toBe(TRANSACTION_TYPE);
  });
});
