// The Confluent wire format: magic byte 0, big-endian 4-byte schema id, then (for Protobuf) the
// message-index array locating the message type inside the schema file, then the payload.
// The array is zig-zag varints: its length, then the indexes; the common case [0] is written
// as the single byte 0.
import { decodeFailure, decoded, type Decoded } from "./decodeError.js";
import { readZigZagVarint, writeZigZagVarint, zigZagVarintLength } from "./varint.js";

export const CONFLUENT_MAGIC_BYTE = 0;
const HEADER_BYTES = 5;
/** Nesting deeper than this is not a real schema; it is a corrupt or hostile record. */
const MAX_MESSAGE_INDEXES = 32;

export interface ConfluentFrame {
  readonly schemaId: number;
  readonly messageIndexes: readonly number[];
  readonly payload: Uint8Array;
}

export function parseConfluentFrame(buf: Uint8Array): Decoded<ConfluentFrame> {
  if (buf.length === 0) return decodeFailure("empty_record", "record holds no bytes", { byteOffset: 0 });
  if (buf[0] !== CONFLUENT_MAGIC_BYTE) {
    return decodeFailure("bad_magic_byte", `expected magic byte 0, found ${buf[0]}`, { byteOffset: 0 });
  }
  if (buf.length < HEADER_BYTES) {
    return decodeFailure(
      "truncated_frame",
      `Confluent header needs ${HEADER_BYTES} bytes, record has ${buf.length}`,
      {
        byteOffset: 0,
      },
    );
  }
  const schemaId = ((buf[1]! << 24) | (buf[2]! << 16) | (buf[3]! << 8) | buf[4]!) >>> 0;
  const count = readZigZagVarint(buf, HEADER_BYTES);
  if (typeof count === "string") {
    return decodeFailure("bad_message_indexes", `message-index count is ${count}`, {
      byteOffset: HEADER_BYTES,
    });
  }
  if (count.value === 0) return decoded({ schemaId, messageIndexes: [0], payload: buf.subarray(count.next) });
  if (count.value < 0 || count.value > MAX_MESSAGE_INDEXES) {
    return decodeFailure("bad_message_indexes", `message-index count ${count.value} is out of range`, {
      byteOffset: HEADER_BYTES,
    });
  }
  const messageIndexes: number[] = [];
  let offset = count.next;
  for (let i = 0; i < count.value; i++) {
    const index = readZigZagVarint(buf, offset);
    if (typeof index === "string" || index.value < 0) {
      return decodeFailure("bad_message_indexes", `message index ${i} is malformed`, { byteOffset: offset });
    }
    messageIndexes.push(index.value);
    offset = index.next;
  }
  return decoded({ schemaId, messageIndexes, payload: buf.subarray(offset) });
}

export function encodeConfluentFrame({ schemaId, messageIndexes, payload }: ConfluentFrame): Buffer {
  const isFirstMessage = messageIndexes.length === 1 && messageIndexes[0] === 0;
  const indexBytes = isFirstMessage
    ? 1
    : zigZagVarintLength(messageIndexes.length) +
      messageIndexes.reduce((n, i) => n + zigZagVarintLength(i), 0);
  const out = Buffer.allocUnsafe(HEADER_BYTES + indexBytes + payload.length);
  out[0] = CONFLUENT_MAGIC_BYTE;
  out.writeUInt32BE(schemaId, 1);
  let offset = HEADER_BYTES;
  if (isFirstMessage) {
    out[offset++] = 0;
  } else {
    offset = writeZigZagVarint(messageIndexes.length, out, offset);
    for (const index of messageIndexes) offset = writeZigZagVarint(index, out, offset);
  }
  out.set(payload, offset);
  return out;
}

/** A record is Confluent-framed iff it starts with the magic byte: a delimited record never
 * does, because a zero-length first frame would be an empty (invalid) transaction. */
export const isConfluentFramed = (buf: Uint8Array): boolean =>
  buf.length > 0 && buf[0] === CONFLUENT_MAGIC_BYTE;
