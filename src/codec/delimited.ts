// The standard Protobuf delimited stream: varint length, then that many bytes of message,
// repeated. Byte-compatible with Java's writeDelimitedTo and protobufjs encodeDelimited. One
// Kafka record or one .pbd file may hold one frame or many.
import { decodeFailure, decoded, type Decoded } from "./decodeError.js";
import { readUint32Varint, uint32VarintLength, writeUint32Varint } from "./varint.js";

/** 4 MiB: far above any real transaction, small enough that a corrupt prefix cannot hurt. */
export const DEFAULT_MAX_FRAME_BYTES = 4 * 1024 * 1024;

export interface SplitOptions {
  readonly maxFrameBytes?: number;
}

/**
 * Splits a buffer into its frames' payloads (views, not copies). Fails on the first bad
 * frame: a record is decided as a whole or dead-lettered as a whole.
 */
export function splitDelimitedFrames(
  buf: Uint8Array,
  { maxFrameBytes = DEFAULT_MAX_FRAME_BYTES }: SplitOptions = {},
): Decoded<Uint8Array[]> {
  if (buf.length === 0) return decodeFailure("empty_record", "record holds no bytes", { byteOffset: 0 });
  const frames: Uint8Array[] = [];
  let offset = 0;
  while (offset < buf.length) {
    const frameIndex = frames.length;
    const prefix = readUint32Varint(buf, offset);
    if (prefix === "truncated") {
      return decodeFailure("truncated_frame", "buffer ends inside a length prefix", {
        byteOffset: offset,
        frameIndex,
      });
    }
    if (prefix === "overlong") {
      return decodeFailure("bad_length_prefix", "length prefix is not a 32-bit varint", {
        byteOffset: offset,
        frameIndex,
      });
    }
    if (prefix.value > maxFrameBytes) {
      return decodeFailure(
        "frame_too_large",
        `frame length ${prefix.value} exceeds the maximum of ${maxFrameBytes} bytes`,
        { byteOffset: offset, frameIndex },
      );
    }
    const end = prefix.next + prefix.value;
    if (end > buf.length) {
      return decodeFailure(
        "truncated_frame",
        `frame declares ${prefix.value} bytes but only ${buf.length - prefix.next} remain`,
        { byteOffset: offset, frameIndex },
      );
    }
    frames.push(buf.subarray(prefix.next, end));
    offset = end;
  }
  return decoded(frames);
}

/** Concatenates payloads into one delimited stream. */
export function joinDelimitedFrames(payloads: readonly Uint8Array[]): Buffer {
  let size = 0;
  for (const p of payloads) size += uint32VarintLength(p.length) + p.length;
  const out = Buffer.allocUnsafe(size);
  let offset = 0;
  for (const p of payloads) {
    offset = writeUint32Varint(p.length, out, offset);
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}
