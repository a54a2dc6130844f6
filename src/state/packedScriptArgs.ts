// One Buffer carrying many length-prefixed fields, for a Lua script that walks it with
// struct.unpack. ioredis builds every command argument separately (type checks, byte length,
// RESP header), which cost more CPU than the script itself when a batch sent several arguments
// per card; packed, a batch is a handful of arguments.
//
// Layout: each field is u32 big-endian (count or byte length), followed by the bytes for a
// byte field. The script reads them in the order they were written.

import { writeU64 } from "./u64.js";

/**
 * Lua helpers for a script that reads a PackedScriptArgs buffer held in `b`: `o`, the offset of
 * what is still to be read, and `u32()`. A byte field is struct's 'I4c0' (the string whose length
 * the preceding u32 gives): a script reads a record's fields with one struct.unpack, e.g.
 * `card, value, o = struct.unpack('>I4c0I4c0', b, o)`, where a helper call per field (an unpack
 * and a string.sub each) cost Redis about 1.5–2 µs more CPU per card of a write.
 */
export const PACKED_ARGS_LUA = `
local o = 1
local function u32() local v; v, o = struct.unpack('>I4', b, o); return v end
`;

export class PackedScriptArgs {
  #buffer: Buffer;
  #length = 0;

  constructor(initialBytes = 4096) {
    this.#buffer = Buffer.allocUnsafe(initialBytes);
  }

  u32(value: number): this {
    this.#reserve(4);
    this.#buffer.writeUInt32BE(value, this.#length);
    this.#length += 4;
    return this;
  }

  /** A non-negative safe integer as 8 bytes big-endian (struct's '>I8'), without a length. */
  u64(value: number): this {
    this.#reserve(8);
    this.#length = writeU64(this.#buffer, value, this.#length);
    return this;
  }

  /** A u32 byte length, then the bytes (a string as UTF-8). */
  field(value: string | Uint8Array): this {
    if (typeof value === "string") {
      // Room for the longest encoding (3 bytes per UTF-16 unit), the length written after the
      // bytes: measuring the string first (Buffer.byteLength) cost as much as encoding it.
      this.#reserve(4 + 3 * value.length);
      const bytes = this.#buffer.write(value, this.#length + 4, "utf8");
      this.#buffer.writeUInt32BE(bytes, this.#length);
      this.#length += 4 + bytes;
      return this;
    }
    return this.u32(value.length).raw(value);
  }

  /** Bytes without a length: the caller wrote a u32 length covering this and the following raw parts. */
  raw(value: Uint8Array): this {
    this.#reserve(value.length);
    this.#buffer.set(value, this.#length);
    this.#length += value.length;
    return this;
  }

  /** The packed bytes (a view: the builder must not be written to afterwards). */
  bytes(): Buffer {
    return this.#buffer.subarray(0, this.#length);
  }

  #reserve(bytes: number): void {
    if (this.#length + bytes <= this.#buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(2 * this.#buffer.length, this.#length + bytes));
    this.#buffer.copy(grown, 0, 0, this.#length);
    this.#buffer = grown;
  }
}
