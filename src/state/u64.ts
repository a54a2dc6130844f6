// A stream position as u64 big-endian, the one layout of it in stored values, script arguments
// and MAC input. Positions are non-negative safe integers, so two u32 halves carry them exactly
// without a BigInt per call.

/** Writes a non-negative safe integer as u64 big-endian at `offset`; returns the offset after it. */
export function writeU64(buffer: Buffer, value: number, offset: number): number {
  buffer.writeUInt32BE(Math.floor(value / 2 ** 32), offset);
  return buffer.writeUInt32BE(value >>> 0, offset + 4);
}

/** Reads a u64 big-endian at `offset` (beyond 2^53 it is not exact: callers check isSafeInteger). */
export function readU64(buffer: Buffer, offset: number): number {
  return buffer.readUInt32BE(offset) * 2 ** 32 + buffer.readUInt32BE(offset + 4);
}
