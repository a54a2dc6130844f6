// HMAC-SHA256 (RFC 2104) as two one-shot crypto.hash calls over precomputed key pads: the same
// bytes as createHmac("sha256", key), at about 1.0 instead of 1.6 µs of CPU per MAC of a card
// value on Node 22 (createHmac builds a native Hmac object and imports the key for every MAC; the
// state store takes up to three MACs per transaction). crypto.hash's "binary" (latin1) output is used
// because its "buffer" output allocated a Buffer per call and cost more than createHmac.
//
// The message is written into a scratch buffer after the inner pad (begin, then the parts), so a
// MAC over framed parts costs no concatenation.
import { hash } from "node:crypto";
import { writeU64 } from "./u64.js";

const BLOCK_BYTES = 64;
export const HMAC_SHA256_BYTES = 32;

export class HmacSha256 {
  /** Inner pad, then the message being built. */
  #inner: Buffer;
  #length = BLOCK_BYTES;
  /** Outer pad, then the inner digest. */
  readonly #outer = Buffer.alloc(BLOCK_BYTES + HMAC_SHA256_BYTES);
  readonly #digest = Buffer.alloc(HMAC_SHA256_BYTES);

  constructor(key: Uint8Array, initialMessageBytes = 512) {
    // RFC 2104: a key longer than the block is replaced by its hash.
    const k = key.length > BLOCK_BYTES ? Buffer.from(hash("sha256", key, "binary"), "latin1") : key;
    this.#inner = Buffer.alloc(BLOCK_BYTES + initialMessageBytes);
    this.#inner.fill(0x36, 0, BLOCK_BYTES);
    this.#outer.fill(0x5c, 0, BLOCK_BYTES);
    for (let i = 0; i < k.length; i++) {
      this.#inner[i]! ^= k[i]!;
      this.#outer[i]! ^= k[i]!;
    }
  }

  /** Starts a new message (whatever was written since the last digest is dropped). */
  begin(): this {
    this.#length = BLOCK_BYTES;
    return this;
  }

  u32(value: number): this {
    this.#reserve(4);
    this.#length = this.#inner.writeUInt32BE(value, this.#length);
    return this;
  }

  /** A non-negative safe integer as u64 big-endian. */
  u64(value: number): this {
    this.#reserve(8);
    this.#length = writeU64(this.#inner, value, this.#length);
    return this;
  }

  utf8(value: string): this {
    // Room for the longest encoding (3 bytes per UTF-16 unit) rather than measuring the string.
    this.#reserve(3 * value.length);
    this.#length += this.#inner.write(value, this.#length, "utf8");
    return this;
  }

  /**
   * u32 byte length | head | middle as UTF-8 | tail: a framed field (a key from its parts), its
   * length written once the middle is encoded rather than measured first.
   */
  framed(head: Uint8Array, middle: string, tail: Uint8Array): this {
    const start = this.#length;
    this.#reserve(4);
    this.#length += 4;
    this.bytes(head).utf8(middle).bytes(tail);
    this.#inner.writeUInt32BE(this.#length - start - 4, start);
    return this;
  }

  bytes(value: Uint8Array): this {
    this.#reserve(value.length);
    this.#inner.set(value, this.#length);
    this.#length += value.length;
    return this;
  }

  /** The MAC of the message since begin(), in a scratch buffer valid until the next digest(). */
  digest(): Buffer {
    const innerDigest = hash("sha256", this.#inner.subarray(0, this.#length), "binary");
    this.#outer.write(innerDigest, BLOCK_BYTES, HMAC_SHA256_BYTES, "latin1");
    this.#digest.write(hash("sha256", this.#outer, "binary"), 0, HMAC_SHA256_BYTES, "latin1");
    this.#length = BLOCK_BYTES;
    return this.#digest;
  }

  #reserve(bytes: number): void {
    if (this.#length + bytes <= this.#inner.length) return;
    const grown = Buffer.alloc(Math.max(2 * this.#inner.length, this.#length + bytes));
    this.#inner.copy(grown, 0, 0, this.#length);
    this.#inner = grown;
  }
}
