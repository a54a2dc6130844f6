// 2. Decode: the same transactions as length-delimited Protobuf through the real ingestion path
// (decodeTransactionRecord: framing, generated static decoder, validation) and as JSON through
// JSON.parse plus ajv schema validation. The project exists because the latter cost 140 ms of
// latency at 50k requests/s; here is what each costs per message on this machine.
import { Ajv } from "ajv";
import { joinDelimitedFrames } from "../../src/codec/delimited.js";
import { decodeTransactionPayload, encodeTransactionPayload, Transaction } from "../../src/codec/messages.js";
import { decodeTransactionRecord } from "../../src/ingest/decodeTransactionRecord.js";
import type { BenchContext } from "../support/benchContext.js";
import { alternatingRounds, round1, round3 } from "../support/alternatingRounds.js";
import { TRANSACTION_JSON_SCHEMA } from "./transactionJsonSchema.js";

export interface DecodeSide {
  readonly nsPerMessage: number;
  readonly messagesPerSecond: number;
  readonly bytesPerMessage: number;
  /** Of which: the parse alone (Protobuf decode / JSON.parse), without validation. */
  readonly parseOnlyNsPerMessage: number;
  /** CPU time per second at 50k messages/s, in ms of one core. */
  readonly cpuMsPerSecondAt50k: number;
}

export interface DecodeResult {
  readonly messages: number;
  readonly rounds: number;
  readonly protobuf: DecodeSide;
  readonly json: DecodeSide;
  /** JSON cost ÷ Protobuf cost per message (= Protobuf throughput ÷ JSON throughput). */
  readonly jsonOverProtobufCost: number;
}

const AT_50K = 50_000;

export async function decode(ctx: BenchContext): Promise<DecodeResult> {
  const { messages, rounds } = ctx.plan.decode;
  ctx.log(`decode: ${messages} transactions, Protobuf vs JSON + ajv, ${rounds} alternating rounds`);
  const source = ctx.traffic.take(messages);
  const txs = Array.from({ length: messages }, (_, i) => Transaction.create(source.at(i).tx));
  // Node Buffers, as kafkajs hands record values over.
  const payloads = txs.map((tx) => Buffer.from(encodeTransactionPayload(tx)));
  const protobufRecords = payloads.map((payload) => joinDelimitedFrames([payload]));
  const jsonRecords = txs.map((tx) =>
    Buffer.from(JSON.stringify(Transaction.toObject(tx, { enums: String, longs: Number })), "utf8"),
  );
  const validate = new Ajv({ allErrors: false }).compile(TRANSACTION_JSON_SCHEMA);

  // Every path must accept every record, or it is not doing the same job.
  let sink = 0;
  const options = { transactionSchemaIds: new Set<number>() };
  const protobufFull = () => {
    for (const record of protobufRecords) {
      const decoded = decodeTransactionRecord(record, options);
      if (!decoded.ok) throw new Error(`Protobuf record rejected: ${decoded.error.message}`);
      sink += decoded.value[0]!.tx.amountMinor;
    }
    return messages;
  };
  const protobufParse = () => {
    for (const payload of payloads) {
      const decoded = decodeTransactionPayload(payload);
      if (!decoded.ok) throw new Error(decoded.error.message);
      sink += decoded.value.amountMinor;
    }
    return messages;
  };
  const jsonFull = () => {
    for (const record of jsonRecords) {
      const value = JSON.parse(record.toString("utf8")) as { amountMinor: number };
      if (!validate(value)) throw new Error(`JSON record rejected: ${JSON.stringify(validate.errors)}`);
      sink += value.amountMinor;
    }
    return messages;
  };
  const jsonParse = () => {
    for (const record of jsonRecords)
      sink += (JSON.parse(record.toString("utf8")) as { amountMinor: number }).amountMinor;
    return messages;
  };
  const [pbFull, jsFull, pbParse, jsParse] = await alternatingRounds(
    [
      { name: "protobuf", round: protobufFull },
      { name: "json", round: jsonFull },
      { name: "protobuf-parse", round: protobufParse },
      { name: "json-parse", round: jsonParse },
    ],
    rounds,
  );
  if (!Number.isFinite(sink)) throw new Error("unreachable: keeps the decoded values alive");
  const side = (full: number, parse: number, records: readonly Buffer[]): DecodeSide => ({
    nsPerMessage: round1(full),
    messagesPerSecond: Math.round(1e9 / full),
    bytesPerMessage: round1(records.reduce((n, r) => n + r.length, 0) / records.length),
    parseOnlyNsPerMessage: round1(parse),
    cpuMsPerSecondAt50k: round1((full * AT_50K) / 1e6),
  });
  const result: DecodeResult = {
    messages,
    rounds,
    protobuf: side(pbFull!.nsPerUnit, pbParse!.nsPerUnit, protobufRecords),
    json: side(jsFull!.nsPerUnit, jsParse!.nsPerUnit, jsonRecords),
    jsonOverProtobufCost: round3(jsFull!.nsPerUnit / pbFull!.nsPerUnit),
  };
  ctx.log(
    `  Protobuf ${result.protobuf.nsPerMessage} ns/msg, JSON+ajv ${result.json.nsPerMessage} ns/msg: ×${result.jsonOverProtobufCost}`,
  );
  return result;
}
