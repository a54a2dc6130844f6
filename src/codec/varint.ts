// Minimal varint reads/writes for framing. Message bodies go through the generated code; only
// the frame headers (length prefixes, Confluent message indexes) are read here.

export interface VarintRead {
  readonly value: number;
  readonly next: number; // offset just past the varint
}

/**
 * Reads an unsigned 32-bit varint (at most 5 bytes). Returns `"truncated"` when the buffer
 * ends inside it and `"overlong"` when it does not fit in 32 bits.
 */
export function readUint32Varint(buf: Uint8Array, offset: number): VarintRead | "truncated" | "overlong" {
  let value = 0;
  for (let i = 0; i < 5; i++) {
    const at = offset + i;
    if (at >= buf.length) return "truncated";
    const byte = buf[at]!;
    if (i === 4 && byte > 0x0f) return "overlong";
    value += (byte & 0x7f) * 2 ** (7 * i);
    if ((byte & 0x80) === 0) return { value, next: at + 1 };
  }
  return "overlong";
}

export function uint32VarintLength(value: number): number {
  let length = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 128);
    length++;
  }
  return length;
}

export function writeUint32Varint(value: number, out: Uint8Array, offset: number): number {
  while (value >= 0x80) {
    out[offset++] = (value & 0x7f) | 0x80;
    value = Math.floor(value / 128);
  }
  out[offset++] = value;
  return offset;
}

/** Zig-zag signed varint, as Confluent's serializers write message indexes. */
export function readZigZagVarint(buf: Uint8Array, offset: number): VarintRead | "truncated" | "overlong" {
  const raw = readUint32Varint(buf, offset);
  if (typeof raw === "string") return raw;
  const value = raw.value % 2 === 0 ? raw.value / 2 : -(raw.value + 1) / 2;
  return { value, next: raw.next };
}

export function writeZigZagVarint(value: number, out: Uint8Array, offset: number): number {
  return writeUint32Varint(value >= 0 ? value * 2 : -value * 2 - 1, out, offset);
}

export function zigZagVarintLength(value: number): number {
  return uint32VarintLength(value >= 0 ? value * 2 : -value * 2 - 1);
}
