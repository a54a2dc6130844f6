// Compact binary form of CardState for the state store. Little-endian, fixed layout, a leading
// format-version byte so a future layout can be read side by side with this one. Scalars are
// float64 so a state that round-trips through the store yields the very features training saw.
//
// v1: u8 version | u16 hidden | f32[hidden] h | f32[hidden] c | u32 txCount |
//     f64 × 13 (lastEventTimeMs, amountLogMean, amountLogVar, amountLogMax, 5 velocity counters,
//     hourHabitSin, hourHabitCos, hourHabitWeight, lastInPersonTimeMs) |
//     str lastMerchantCountry | str lastInPersonCountry  (u8 length + ASCII) |
//     3 × (u8 count + f64[count]) recentMerchants, recentDevices, recentIpPrefixes
// v2: v1 | u8 groups (5) | f64[groups] mccAmountLogMean | u8[groups] mccAmountCount
//     (the per-MCC-group usual amount of card-features-2; counts are capped at 20, so a byte).
// v1 bytes still decode, with the per-group statistics empty (as for a card new to every group).
import { RECENT_DEVICES, RECENT_IP_PREFIXES, RECENT_MERCHANTS, type CardState } from "./cardState.js";
import { MCC_GROUPS } from "./transactionFacts.js";

export const CARD_STATE_FORMAT_VERSION = 2;
const MCC_GROUP_COUNT = MCC_GROUPS.length;
const MAX_HIDDEN = 4096;
const MAX_COUNTRY = 8;

export type CardStateCodecErrorKind = "empty" | "unsupported_version" | "truncated" | "malformed";

export class CardStateCodecError extends Error {
  override readonly name = "CardStateCodecError";
  constructor(
    readonly kind: CardStateCodecErrorKind,
    message: string,
    readonly byteOffset?: number,
  ) {
    super(message);
  }
}

const SCALARS = 13;
/** The encoder copies h and c as bytes where the host's float layout is the format's (little-endian). */
const HOST_IS_LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

export function encodedCardStateSize(state: CardState): number {
  const hidden = state.h.length;
  return (
    1 +
    2 +
    8 * hidden +
    4 +
    8 * SCALARS +
    2 +
    state.lastMerchantCountry.length +
    state.lastInPersonCountry.length +
    3 +
    8 * (state.recentMerchants.length + state.recentDevices.length + state.recentIpPrefixes.length) +
    1 +
    9 * MCC_GROUP_COUNT
  );
}

// Encode and decode run for every card of every batch: straight-line code over one DataView, no
// per-call arrays or closures (the loops over field lists they replaced showed in profiles).

export function encodeCardState(state: CardState): Uint8Array {
  const bytes = new Uint8Array(encodedCardStateSize(state));
  encodeCardStateInto(state, bytes, new DataView(bytes.buffer), 0);
  return bytes;
}

/**
 * Encodes the state at `offset` of `bytes` (`view` over the same buffer as `bytes`, from the
 * same start); returns the offset after it. The state write encodes a batch's cards into one
 * buffer: a small typed array per card left its backing store for the garbage collector.
 */
export function encodeCardStateInto(
  state: CardState,
  bytes: Uint8Array,
  view: DataView,
  offset: number,
): number {
  const hidden = state.h.length;
  if (state.c.length !== hidden) throw new RangeError(`h has ${hidden} values but c has ${state.c.length}`);
  if (offset + encodedCardStateSize(state) > bytes.length)
    throw new RangeError(`card state does not fit at offset ${offset} of ${bytes.length} bytes`);
  view.setUint8(offset, CARD_STATE_FORMAT_VERSION);
  view.setUint16(offset + 1, hidden, true);
  let o = offset + 3;
  o = writeFloat32s(bytes, view, o, state.h);
  o = writeFloat32s(bytes, view, o, state.c);
  view.setUint32(o, state.txCount, true);
  o += 4;
  const v = state.velocity;
  view.setFloat64(o, state.lastEventTimeMs, true);
  view.setFloat64(o + 8, state.amountLogMean, true);
  view.setFloat64(o + 16, state.amountLogVar, true);
  view.setFloat64(o + 24, state.amountLogMax, true);
  view.setFloat64(o + 32, v.txCount1h, true);
  view.setFloat64(o + 40, v.txCount24h, true);
  view.setFloat64(o + 48, v.amountEur24h, true);
  view.setFloat64(o + 56, v.smallTxCount1h, true);
  view.setFloat64(o + 64, v.newMerchantCount1h, true);
  view.setFloat64(o + 72, state.hourHabitSin, true);
  view.setFloat64(o + 80, state.hourHabitCos, true);
  view.setFloat64(o + 88, state.hourHabitWeight, true);
  view.setFloat64(o + 96, state.lastInPersonTimeMs, true);
  o += 8 * SCALARS;
  o = writeCountry(bytes, o, state.lastMerchantCountry);
  o = writeCountry(bytes, o, state.lastInPersonCountry);
  o = writeHashes(view, o, state.recentMerchants);
  o = writeHashes(view, o, state.recentDevices);
  o = writeHashes(view, o, state.recentIpPrefixes);
  view.setUint8(o++, MCC_GROUP_COUNT);
  for (let g = 0; g < MCC_GROUP_COUNT; g++, o += 8) view.setFloat64(o, state.mccAmountLogMean[g]!, true);
  for (let g = 0; g < MCC_GROUP_COUNT; g++) {
    const count = state.mccAmountCount[g]!;
    if (!(count >= 0 && count <= 255 && Number.isInteger(count)))
      throw new RangeError(`mccAmountCount ${count} is not a byte`);
    bytes[o++] = count;
  }
  return o;
}

function writeFloat32s(bytes: Uint8Array, view: DataView, o: number, values: Float32Array): number {
  if (HOST_IS_LITTLE_ENDIAN)
    bytes.set(new Uint8Array(values.buffer, values.byteOffset, 4 * values.length), o);
  else for (let i = 0; i < values.length; i++) view.setFloat32(o + 4 * i, values[i]!, true);
  return o + 4 * values.length;
}

const isPrintableAscii = (code: number) => code >= 0x20 && code <= 0x7e;

function writeCountry(bytes: Uint8Array, o: number, country: string): number {
  let printable = country.length <= MAX_COUNTRY;
  for (let i = 0; printable && i < country.length; i++) printable = isPrintableAscii(country.charCodeAt(i));
  if (!printable) throw new RangeError(`country code ${JSON.stringify(country)} is not short ASCII`);
  bytes[o++] = country.length;
  for (let i = 0; i < country.length; i++) bytes[o++] = country.charCodeAt(i);
  return o;
}

function writeHashes(view: DataView, o: number, hashes: readonly number[]): number {
  view.setUint8(o++, hashes.length);
  for (let i = 0; i < hashes.length; i++, o += 8) view.setFloat64(o, hashes[i]!, true);
  return o;
}

function need(bytes: Uint8Array, o: number, n: number, what: string): void {
  if (o + n > bytes.length) throw new CardStateCodecError("truncated", `card state ends inside ${what}`, o);
}

/**
 * `hc`, when it holds 2 × the state's hidden size values, receives h then c, and the state's h and
 * c are views of it: the state read decodes a batch's cards into one Float32Array (two small
 * typed arrays per card left their backing stores for the garbage collector). Otherwise h and c
 * are fresh arrays.
 */
export function decodeCardState(bytes: Uint8Array, hc?: Float32Array): CardState {
  if (bytes.length === 0) throw new CardStateCodecError("empty", "card state holds no bytes", 0);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint8(0);
  if (version !== CARD_STATE_FORMAT_VERSION && version !== 1) {
    throw new CardStateCodecError(
      "unsupported_version",
      `card state format version ${version} is not 1 or ${CARD_STATE_FORMAT_VERSION}`,
      0,
    );
  }
  need(bytes, 1, 2, "the hidden size");
  const hidden = view.getUint16(1, true);
  if (hidden > MAX_HIDDEN)
    throw new CardStateCodecError("malformed", `hidden size ${hidden} exceeds ${MAX_HIDDEN}`, 1);
  let o = 3;
  need(bytes, o, 8 * hidden, "h/c");
  const into = hc?.length === 2 * hidden ? hc : new Float32Array(2 * hidden);
  // h then c, float by float: copying them as bytes took a view of each side and of its source
  // (four typed arrays per card besides h and c); a whole decode cost 0.62-0.74 µs that way and
  // 0.50-0.59 this way (same process, alternating, 2026-12-06).
  for (let i = 0; i < 2 * hidden; i++) into[i] = view.getFloat32(o + 4 * i, true);
  const h = into.subarray(0, hidden);
  const c = into.subarray(hidden);
  o += 8 * hidden;
  need(bytes, o, 4 + 8 * SCALARS, "the scalar fields");
  const txCount = view.getUint32(o, true);
  o += 4;
  for (let i = 0; i < SCALARS; i++) {
    if (!Number.isFinite(view.getFloat64(o + 8 * i, true)))
      throw new CardStateCodecError("malformed", "a scalar field is not finite", o + 8 * SCALARS);
  }
  // Filled below; read-only once the state is built (states may share them, see advanceCardState).
  const recentMerchants: number[] = [];
  const recentDevices: number[] = [];
  const recentIpPrefixes: number[] = [];
  const state: CardState = {
    h,
    c,
    txCount,
    lastEventTimeMs: view.getFloat64(o, true),
    amountLogMean: view.getFloat64(o + 8, true),
    amountLogVar: view.getFloat64(o + 16, true),
    amountLogMax: view.getFloat64(o + 24, true),
    velocity: {
      txCount1h: view.getFloat64(o + 32, true),
      txCount24h: view.getFloat64(o + 40, true),
      amountEur24h: view.getFloat64(o + 48, true),
      smallTxCount1h: view.getFloat64(o + 56, true),
      newMerchantCount1h: view.getFloat64(o + 64, true),
    },
    hourHabitSin: view.getFloat64(o + 72, true),
    hourHabitCos: view.getFloat64(o + 80, true),
    hourHabitWeight: view.getFloat64(o + 88, true),
    lastInPersonTimeMs: view.getFloat64(o + 96, true),
    lastMerchantCountry: "",
    lastInPersonCountry: "",
    recentMerchants,
    recentDevices,
    recentIpPrefixes,
    mccAmountLogMean: new Array<number>(MCC_GROUP_COUNT).fill(0),
    mccAmountCount: new Array<number>(MCC_GROUP_COUNT).fill(0),
  };
  o += 8 * SCALARS;
  state.lastMerchantCountry = readCountry(bytes, o, "lastMerchantCountry");
  o += 1 + state.lastMerchantCountry.length;
  state.lastInPersonCountry = readCountry(bytes, o, "lastInPersonCountry");
  o += 1 + state.lastInPersonCountry.length;
  o = readHashes(bytes, view, o, "recentMerchants", RECENT_MERCHANTS, recentMerchants);
  o = readHashes(bytes, view, o, "recentDevices", RECENT_DEVICES, recentDevices);
  o = readHashes(bytes, view, o, "recentIpPrefixes", RECENT_IP_PREFIXES, recentIpPrefixes);
  if (version >= 2) o = readMccAmounts(bytes, view, o, state);
  if (o !== bytes.length)
    throw new CardStateCodecError("malformed", `${bytes.length - o} trailing bytes after the card state`, o);
  return state;
}

function readCountry(bytes: Uint8Array, o: number, what: string): string {
  need(bytes, o, 1, what);
  const length = bytes[o]!;
  if (length > MAX_COUNTRY) throw new CardStateCodecError("malformed", `${what} is ${length} bytes long`, o);
  need(bytes, o + 1, length, what);
  let out = "";
  for (let i = 1; i <= length; i++) out += String.fromCharCode(bytes[o + i]!);
  return out;
}

function readHashes(
  bytes: Uint8Array,
  view: DataView,
  o: number,
  what: string,
  cap: number,
  into: number[],
): number {
  need(bytes, o, 1, what);
  const n = bytes[o]!;
  if (n > cap) throw new CardStateCodecError("malformed", `${what} holds ${n} entries, more than ${cap}`, o);
  need(bytes, o + 1, 8 * n, what);
  for (let i = 0; i < n; i++) into.push(view.getFloat64(o + 1 + 8 * i, true));
  return o + 1 + 8 * n;
}

function readMccAmounts(bytes: Uint8Array, view: DataView, o: number, state: CardState): number {
  need(bytes, o, 1, "the MCC group count");
  if (bytes[o] !== MCC_GROUP_COUNT)
    throw new CardStateCodecError("malformed", `${bytes[o]} MCC groups, not ${MCC_GROUP_COUNT}`, o);
  o += 1;
  need(bytes, o, 9 * MCC_GROUP_COUNT, "the MCC group amounts");
  for (let g = 0; g < MCC_GROUP_COUNT; g++, o += 8) {
    const mean = view.getFloat64(o, true);
    if (!Number.isFinite(mean))
      throw new CardStateCodecError("malformed", "an MCC group mean is not finite", o);
    state.mccAmountLogMean[g] = mean;
  }
  for (let g = 0; g < MCC_GROUP_COUNT; g++) state.mccAmountCount[g] = bytes[o++]!;
  return o;
}

export type DecodedCardState = { ok: true; value: CardState } | { ok: false; error: CardStateCodecError };

/** decodeCardState as a value: malformed bytes are a normal case for a store reader. */
export function tryDecodeCardState(bytes: Uint8Array): DecodedCardState {
  try {
    return { ok: true, value: decodeCardState(bytes) };
  } catch (err) {
    if (err instanceof CardStateCodecError) return { ok: false, error: err };
    throw err;
  }
}
