// Feature hashes, computed once at ingestion so later stages compare numbers, not strings.
//
// Representation: a hash is a JavaScript `number` holding the unsigned 64-bit xxhash64 (seed 0)
// rounded to the nearest double (53 significant bits). That is exactly what the generated
// decoder yields for a `fixed64` field when Long support is off (hi * 2^32 + lo, rounded once),
// so a hash supplied by an upstream gateway and one computed here compare equal with `===`.
// Numbers are cheap to compare, to keep in a Set and to store in a Float64Array; 0 means absent.
//
// xxhash64 comes from xxhash-wasm (WebAssembly), instantiated once when this module loads. Until
// 2026-12 it came from @node-rs/xxhash, a native addon: a call into WebAssembly costs less than
// one through N-API (181-186 against 318-333 ns per hash of ids like this project's, Node 22), so
// computeFeatureHashes took 0.64-0.66 instead of 0.84-0.85 µs per transaction (ids as the
// simulator makes them, a third without device or IP; old and new alternating, two runs of ten
// rounds, AMD EPYC host), and WebAssembly needs no prebuilt binary per platform. The tests check
// it against a test vector of xxHash's and against the native addon.
import xxhash from "xxhash-wasm";
import type { fraud } from "../codec/generated/fraud.js";

const { h64 } = await xxhash();

export type FeatureHash = number;

export interface FeatureHashes {
  readonly merchant: FeatureHash;
  readonly device: FeatureHash;
  readonly ipPrefix: FeatureHash;
  readonly bin: FeatureHash;
}

type WireHash = number | bigint | { low: number; high: number; unsigned?: boolean } | null | undefined;

/** A wire fixed64 (number, bigint or Long-like) as a FeatureHash; 0 when absent. */
export function wireHashToFeatureHash(value: WireHash): FeatureHash {
  if (value === null || value === undefined) return 0;
  if (typeof value === "number") return value;
  if (typeof value === "bigint") return Number(BigInt.asUintN(64, value));
  return (value.high >>> 0) * 4294967296 + (value.low >>> 0);
}

export const hashString = (value: string): FeatureHash => (value === "" ? 0 : Number(h64(value)));

/** The /24 network of an IPv4 address or the /48 of an IPv6 one, as text; "" when unparseable. */
export function ipPrefix(ip: string): string {
  if (ip === "") return "";
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.\d{1,3}$/.exec(ip);
  if (v4) return `${Number(v4[1])}.${Number(v4[2])}.${Number(v4[3])}.0/24`;
  if (!ip.includes(":")) return "";
  const groups = expandIpv6(ip);
  if (groups === null) return "";
  return `${groups.slice(0, 3).join(":")}::/48`;
}

function expandIpv6(ip: string): string[] | null {
  const zoneless = ip.split("%")[0] ?? "";
  const halves = zoneless.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const missing = 8 - head.length - tail.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return null;
  const groups = [...head, ...Array<string>(missing).fill("0"), ...tail];
  if (!groups.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return null;
  return groups.map((g) => parseInt(g, 16).toString(16));
}

/** Each hash as the upstream gateway supplied it, else computed here. */
export function computeFeatureHashes(tx: fraud.v1.ITransaction): FeatureHashes {
  // Written out rather than through a helper taking a closure per field: once per transaction,
  // those four closures were a measurable share of a drain's allocation.
  const up = tx.hashes;
  const merchant = wireHashToFeatureHash(up?.merchant);
  const device = wireHashToFeatureHash(up?.device);
  const prefix = wireHashToFeatureHash(up?.ipPrefix);
  const bin = wireHashToFeatureHash(up?.bin);
  return {
    merchant: merchant !== 0 ? merchant : hashString(tx.merchantId ?? ""),
    device: device !== 0 ? device : hashString(tx.deviceId ?? ""),
    ipPrefix: prefix !== 0 ? prefix : hashString(ipPrefix(tx.ip ?? "")),
    bin: bin !== 0 ? bin : hashString(tx.bin ?? ""),
  };
}
