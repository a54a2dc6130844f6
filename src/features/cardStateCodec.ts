// Compact binary form of CardState for the state store. Little-endian, fixed layout, a leading
// format-version byte so a future layout can be read side by side with this one. Scalars are
// float64 so a state that round-trips through the store yields the very features training saw.
//
// v1: u8 version | u16 hidden | f32[hidden] h | f32[hidden] c | u32 txCount |
//     f64 × 13 (lastEventTimeMs, amountLogMean, amountLogVar, amountLogMax, 5 velocity counters,
//     hourHabitSin, hourHabitCos, hourHabitWeight, lastInPersonTimeMs) |
//     str lastMerchantCountry | str lastInPersonCountry  (u8 length + ASCII) |
//     3 × (u8 count + f64[count]) recentMerchants, recentDevices, recentIpPrefixes
import { RECENT_DEVICES, RECENT_IP_PREFIXES, RECENT_MERCHANTS, type CardState } from "./cardState.js";

export const CARD_STATE_FORMAT_VERSION = 1;
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
/** h and c are copied as bytes where the host's float layout is the format's (little-endian). */
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
    8 * (state.recentMerchants.length + state.recentDevices.length + state.recentIpPrefixes.length)
  );
}

export function encodeCardState(state: CardState): Uint8Array {
  const hidden = state.h.length;
  if (state.c.length !== hidden) throw new RangeError(`h has ${hidden} values but c has ${state.c.length}`);
  const bytes = new Uint8Array(encodedCardStateSize(state));
  const view = new DataView(bytes.buffer);
  let o = 0;
  view.setUint8(o, CARD_STATE_FORMAT_VERSION);
  o += 1;
  view.setUint16(o, hidden, true);
  o += 2;
  for (const arr of [state.h, state.c]) {
    if (HOST_IS_LITTLE_ENDIAN) bytes.set(new Uint8Array(arr.buffer, arr.byteOffset, 4 * hidden), o);
    else for (let i = 0; i < hidden; i++) view.setFloat32(o + 4 * i, arr[i]!, true);
    o += 4 * hidden;
  }
  view.setUint32(o, state.txCount, true);
  o += 4;
  const v = state.velocity;
  for (const x of [
    state.lastEventTimeMs,
    state.amountLogMean,
    state.amountLogVar,
    state.amountLogMax,
    v.txCount1h,
    v.txCount24h,
    v.amountEur24h,
    v.smallTxCount1h,
    v.newMerchantCount1h,
    state.hourHabitSin,
    state.hourHabitCos,
    state.hourHabitWeight,
    state.lastInPersonTimeMs,
  ]) {
    view.setFloat64(o, x, true);
    o += 8;
  }
  for (const s of [state.lastMerchantCountry, state.lastInPersonCountry]) {
    if (s.length > MAX_COUNTRY || !/^[\x20-\x7e]*$/.test(s))
      throw new RangeError(`country code ${JSON.stringify(s)} is not short ASCII`);
    view.setUint8(o, s.length);
    o += 1;
    for (let i = 0; i < s.length; i++) view.setUint8(o++, s.charCodeAt(i));
  }
  for (const set of [state.recentMerchants, state.recentDevices, state.recentIpPrefixes]) {
    view.setUint8(o, set.length);
    o += 1;
    for (const h of set) {
      view.setFloat64(o, h, true);
      o += 8;
    }
  }
  return bytes;
}

export function decodeCardState(bytes: Uint8Array): CardState {
  if (bytes.length === 0) throw new CardStateCodecError("empty", "card state holds no bytes", 0);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let o = 0;
  const need = (n: number, what: string): void => {
    if (o + n > bytes.length) throw new CardStateCodecError("truncated", `card state ends inside ${what}`, o);
  };
  const version = view.getUint8(o);
  o += 1;
  if (version !== CARD_STATE_FORMAT_VERSION) {
    throw new CardStateCodecError(
      "unsupported_version",
      `card state format version ${version} is not ${CARD_STATE_FORMAT_VERSION}`,
      0,
    );
  }
  need(2, "the hidden size");
  const hidden = view.getUint16(o, true);
  o += 2;
  if (hidden > MAX_HIDDEN)
    throw new CardStateCodecError("malformed", `hidden size ${hidden} exceeds ${MAX_HIDDEN}`, 1);
  const h = new Float32Array(hidden);
  const c = new Float32Array(hidden);
  need(8 * hidden, "h/c");
  for (const arr of [h, c]) {
    if (HOST_IS_LITTLE_ENDIAN) new Uint8Array(arr.buffer).set(bytes.subarray(o, o + 4 * hidden));
    else for (let i = 0; i < hidden; i++) arr[i] = view.getFloat32(o + 4 * i, true);
    o += 4 * hidden;
  }
  need(4 + 8 * SCALARS, "the scalar fields");
  const txCount = view.getUint32(o, true);
  o += 4;
  const s: number[] = [];
  for (let i = 0; i < SCALARS; i++, o += 8) s.push(view.getFloat64(o, true));
  if (s.some((x) => !Number.isFinite(x)))
    throw new CardStateCodecError("malformed", "a scalar field is not finite", o);
  const readString = (what: string): string => {
    need(1, what);
    const len = view.getUint8(o);
    o += 1;
    if (len > MAX_COUNTRY) throw new CardStateCodecError("malformed", `${what} is ${len} bytes long`, o - 1);
    need(len, what);
    let out = "";
    for (let i = 0; i < len; i++) out += String.fromCharCode(view.getUint8(o++));
    return out;
  };
  const lastMerchantCountry = readString("lastMerchantCountry");
  const lastInPersonCountry = readString("lastInPersonCountry");
  const readSet = (what: string, cap: number): number[] => {
    need(1, what);
    const n = view.getUint8(o);
    o += 1;
    if (n > cap)
      throw new CardStateCodecError("malformed", `${what} holds ${n} entries, more than ${cap}`, o - 1);
    need(8 * n, what);
    const out: number[] = [];
    for (let i = 0; i < n; i++, o += 8) out.push(view.getFloat64(o, true));
    return out;
  };
  const recentMerchants = readSet("recentMerchants", RECENT_MERCHANTS);
  const recentDevices = readSet("recentDevices", RECENT_DEVICES);
  const recentIpPrefixes = readSet("recentIpPrefixes", RECENT_IP_PREFIXES);
  if (o !== bytes.length)
    throw new CardStateCodecError("malformed", `${bytes.length - o} trailing bytes after the card state`, o);
  return {
    h,
    c,
    txCount,
    lastEventTimeMs: s[0]!,
    amountLogMean: s[1]!,
    amountLogVar: s[2]!,
    amountLogMax: s[3]!,
    velocity: {
      txCount1h: s[4]!,
      txCount24h: s[5]!,
      amountEur24h: s[6]!,
      smallTxCount1h: s[7]!,
      newMerchantCount1h: s[8]!,
    },
    hourHabitSin: s[9]!,
    hourHabitCos: s[10]!,
    hourHabitWeight: s[11]!,
    lastInPersonTimeMs: s[12]!,
    lastMerchantCountry,
    lastInPersonCountry,
    recentMerchants,
    recentDevices,
    recentIpPrefixes,
  };
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
