import { describe, expect, it } from "vitest";
import { FEATURE_T0, featureTransaction } from "../support/transactions.js";
import fc from "fast-check";
import { fraud } from "../../src/codec/generated/fraud.js";
import { computeFeatureHashes, hashString, ipPrefix } from "../../src/ingest/featureHashes.js";
import { advanceCardState, emptyCardState, type CardState } from "../../src/features/cardState.js";
import {
  CARD_STATE_FORMAT_VERSION,
  CardStateCodecError,
  decodeCardState,
  encodeCardState,
  encodeCardStateInto,
  tryDecodeCardState,
} from "../../src/features/cardStateCodec.js";
import {
  computeFeatureFacts,
  computeFeatures,
  computeRawFeatures,
  FEATURE_COUNT,
  scratchRawFeatures,
  FEATURE_NAMES,
  FEATURE_SOURCES,
} from "../../src/features/featureVector.js";
import { DeviceFanOutCounter } from "../../src/features/deviceFanOut.js";
import { xxh64 } from "@node-rs/xxhash";

const T0 = FEATURE_T0;
const tx = featureTransaction;

const features = (t: fraud.v1.ITransaction, state: CardState, deviceCards = 0): Record<string, number> => {
  const out = new Float32Array(FEATURE_COUNT);
  computeFeatures(t, computeFeatureHashes(t), state, { deviceCardCount24h: deviceCards }, out, 0);
  return Object.fromEntries(FEATURE_NAMES.map((n, i) => [n, out[i]!]));
};

const replay = (txs: fraud.v1.ITransaction[]): CardState =>
  txs.reduce((s, t) => advanceCardState(s, t, computeFeatureHashes(t)), emptyCardState(8));

describe("feature hashes", () => {
  it("addresses in one IPv4 /24 or IPv6 /48 share a prefix hash, other networks do not", () => {
    expect(ipPrefix("85.12.7.200")).toBe("85.12.7.0/24");
    expect(ipPrefix("2001:db8:1::5")).toBe(ipPrefix("2001:0db8:0001:ffff::1"));
    const h = (ip: string) => computeFeatureHashes(tx({ ip })).ipPrefix;
    expect(h("85.12.7.1")).toBe(h("85.12.7.254"));
    expect(h("85.12.8.1")).not.toBe(h("85.12.7.1"));
    expect(h("")).toBe(0);
  });

  it("hashes a string's UTF-8 bytes with xxhash64, seed 0: a test vector of xxHash's, and the native addon on other strings", () => {
    expect(hashString("abc")).toBe(Number(0x44bc2cf5ad770999n));
    // "" is absent (0), not hashed: its xxhash64 would be 0xef46db3751d8e999.
    expect(hashString("")).toBe(0);
    for (const s of [
      "merchant-42",
      "dev-9f3a01c2",
      "85.12.7.0/24",
      "424242",
      "Café Ωmega-ü",
      "😀".repeat(40),
    ])
      expect(hashString(s)).toBe(Number(xxh64(s)));
  });

  it("a hash supplied upstream as fixed64 equals the one computed here after a wire round trip", () => {
    const upstream = xxh64("merchant-42");
    const wire = fraud.v1.Transaction.encode({
      ...tx(),
      hashes: { merchant: upstream.toString() as unknown as number },
    }).finish();
    const decoded = fraud.v1.Transaction.decode(wire);
    expect(computeFeatureHashes(decoded).merchant).toBe(hashString("merchant-42"));
    expect(computeFeatureHashes(tx({ merchantId: "merchant-42" })).merchant).toBe(hashString("merchant-42"));
  });

  it("uses an upstream hash instead of recomputing it", () => {
    expect(computeFeatureHashes(tx({ hashes: { device: 12345 } })).device).toBe(12345);
  });
});

describe("card state and features", () => {
  it("a burst of small charges at new merchants raises the card-testing velocity features", () => {
    const history = Array.from({ length: 10 }, (_, i) => tx({ eventTimeMs: T0 - (10 - i) * 86_400_000 }));
    const calm = features(tx({ eventTimeMs: T0 }), replay(history));
    const burst = Array.from({ length: 6 }, (_, i) =>
      tx({ amountMinor: 100, merchantId: `shop-${i}`, channel: 3, eventTimeMs: T0 + i * 60_000 }),
    );
    const after = features(
      tx({ amountMinor: 90, merchantId: "shop-x", channel: 3, eventTimeMs: T0 + 7 * 60_000 }),
      replay([...history, ...burst]),
    );
    expect(after.small_tx_count_1h).toBeGreaterThan(calm.small_tx_count_1h! + 0.4);
    expect(after.new_merchant_count_1h).toBeGreaterThan(calm.new_merchant_count_1h! + 0.4);
    expect(after.merchant_new).toBe(1);
    expect(calm.merchant_new).toBe(0);
  });

  it("an in-person charge abroad an hour after one at home reads as impossible travel", () => {
    const state = replay([tx({ eventTimeMs: T0 })]);
    expect(
      features(tx({ merchantCountry: "BR", eventTimeMs: T0 + 3_600_000 }), state).impossible_travel,
    ).toBe(1);
    expect(
      features(tx({ merchantCountry: "BR", eventTimeMs: T0 + 86_400_000 }), state).impossible_travel,
    ).toBe(0);
  });

  it("a large amount for a card with small habits has a high amount z-score", () => {
    const history = Array.from({ length: 20 }, (_, i) =>
      tx({ amountMinor: 2000 + 100 * (i % 5), eventTimeMs: T0 + i * 86_400_000 }),
    );
    const f = features(tx({ amountMinor: 250_000, eventTimeMs: T0 + 21 * 86_400_000 }), replay(history));
    expect(f.amount_z).toBeGreaterThan(0.9);
    expect(f.amount_vs_card_max).toBeGreaterThan(0.9);
  });

  it("every scaled feature stays within [-1.5, 1.5] for arbitrary transactions", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            amountMinor: fc.integer({ min: 1, max: 1e9 }),
            dt: fc.integer({ min: -3_600_000, max: 40 * 86_400_000 }),
            merchant: fc.integer({ min: 0, max: 5 }),
            channel: fc.integer({ min: 0, max: 6 }),
            country: fc.constantFrom("DE", "FR", "BR"),
            currency: fc.constantFrom("EUR", "JPY", "XXX"),
          }),
          { minLength: 1, maxLength: 30 },
        ),
        (steps) => {
          let state = emptyCardState(4);
          let t = T0;
          for (const s of steps) {
            t += s.dt;
            const x = tx({
              amountMinor: s.amountMinor,
              merchantId: `m${s.merchant}`,
              channel: s.channel,
              merchantCountry: s.country,
              currency: s.currency,
              eventTimeMs: t,
              deviceId: "d",
            });
            const f = features(x, state, 500);
            for (const [name, v] of Object.entries(f)) {
              if (!(Number.isFinite(v) && v >= -1.5 && v <= 1.5)) throw new Error(`${name}=${v}`);
            }
            state = advanceCardState(state, x, computeFeatureHashes(x));
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("without card state the rule facts keep transaction facts and omit state-derived ones", () => {
    const t = tx({ amountMinor: 99_900, merchantCountry: "US" });
    const facts = computeFeatureFacts(t, computeFeatureHashes(t), null, null);
    expect(facts.amount_eur).toBeCloseTo(999, 6);
    expect(facts.foreign_merchant).toBe(1);
    expect(facts.tx_count_1h).toBeUndefined();
    expect(facts.device_card_count_24h).toBeUndefined();
    const stateNames = FEATURE_NAMES.filter((n) => FEATURE_SOURCES[n] === "state");
    expect(stateNames.length).toBeGreaterThan(10);
    const withState = computeFeatureFacts(t, computeFeatureHashes(t), emptyCardState(2), {
      deviceCardCount24h: 3,
    });
    for (const n of stateNames) expect(withState[n]).toBeTypeOf("number");
  });

  it("the raw values the model's step wrote give the rules the same facts as computing them again", () => {
    let state = emptyCardState(2);
    const txs = [
      tx(),
      tx({ amountMinor: 180_000, merchantCountry: "US", deviceId: "d-9", eventTimeMs: T0 + 60_000 }),
      tx({ merchantId: "m-2", ip: "10.1.2.3", eventTimeMs: T0 + 120_000 }),
    ];
    const raw = new Float64Array(FEATURE_COUNT * txs.length);
    const x = new Float32Array(FEATURE_COUNT * txs.length);
    txs.forEach((t, k) => {
      const hashes = computeFeatureHashes(t);
      computeFeatures(t, hashes, state, { deviceCardCount24h: k + 2 }, x, k * FEATURE_COUNT, raw);
      const stepped = raw.subarray(k * FEATURE_COUNT, (k + 1) * FEATURE_COUNT);
      expect(stepped).toEqual(computeRawFeatures(t, hashes, state, { deviceCardCount24h: k + 2 }).values);
      state = advanceCardState(state, t, hashes);
    });
    expect(raw[FEATURE_COUNT + FEATURE_NAMES.indexOf("foreign_merchant")]).toBe(1);
  });

  it("the rules' scratch raw features hold what computeRawFeatures copies, with which sources are known", () => {
    const t = tx({ deviceId: "d-1", ip: "10.0.0.9" });
    const hashes = computeFeatureHashes(t);
    const state = advanceCardState(emptyCardState(2), tx({ eventTimeMs: T0 - 60_000 }), hashes);
    for (const [s, shared] of [
      [null, null],
      [state, null],
      [null, { deviceCardCount24h: 4 }],
      [state, { deviceCardCount24h: 4 }],
    ] as const) {
      const copied = computeRawFeatures(t, hashes, s, shared);
      const scratch = scratchRawFeatures(t, hashes, s, shared);
      expect(scratch).toEqual(copied);
      // A copy is the caller's; the scratch is overwritten by the next computation.
      expect(copied.values).not.toBe(scratch.values);
    }
  });

  it("a transaction's velocity features are the counters the state update keeps for its card", () => {
    const first = tx({ amountMinor: 300, eventTimeMs: T0 - 20 * 60_000 });
    const state = advanceCardState(emptyCardState(2), first, computeFeatureHashes(first));
    const t = tx({ amountMinor: 250, merchantId: "m-new", eventTimeMs: T0 });
    const hashes = computeFeatureHashes(t);
    const f = computeRawFeatures(t, hashes, state, null).values;
    const kept = advanceCardState(state, t, hashes).velocity;
    const at = (name: string) => f[FEATURE_NAMES.indexOf(name as (typeof FEATURE_NAMES)[number])];
    expect(at("tx_count_1h")).toBe(kept.txCount1h);
    expect(at("tx_count_24h")).toBe(kept.txCount24h);
    expect(at("amount_eur_24h")).toBe(kept.amountEur24h);
    expect(at("small_tx_count_1h")).toBe(kept.smallTxCount1h);
    expect(at("new_merchant_count_1h")).toBe(kept.newMerchantCount1h);
    expect(kept.txCount1h).toBeGreaterThan(1.5); // the first, decayed over 20 min, and this one
    expect(kept.smallTxCount1h).toBeGreaterThan(1.5); // both under 5 EUR
  });

  it("advancing a card state leaves it untouched and shares only its unchanged entity sets", () => {
    const hashes = computeFeatureHashes(tx({ deviceId: "" }));
    const before = advanceCardState(emptyCardState(2), tx({ eventTimeMs: T0 - 60_000 }), hashes);
    const snapshot = structuredClone(before);
    const after = advanceCardState(before, tx(), hashes);
    expect(before).toEqual(snapshot);
    expect(after.recentMerchants).toBe(before.recentMerchants); // the same merchant again
    expect(after.recentDevices).toBe(before.recentDevices); // no device
    const elsewhere = advanceCardState(
      before,
      tx({ merchantId: "m-other" }),
      computeFeatureHashes(tx({ merchantId: "m-other", deviceId: "" })),
    );
    expect(elsewhere.recentMerchants).toEqual([hashString("m-other"), hashes.merchant]);
    expect(before.recentMerchants).toEqual([hashes.merchant]);
  });
});

describe("device fan-out", () => {
  it("counts distinct cards on a device over the trailing 24 hours", () => {
    const fanOut = new DeviceFanOutCounter();
    expect(fanOut.observe(7, "a", T0)).toBe(1);
    expect(fanOut.observe(7, "a", T0 + 1000)).toBe(1);
    expect(fanOut.observe(7, "b", T0 + 2000)).toBe(2);
    expect(fanOut.observe(7, "c", T0 + 25 * 3_600_000)).toBe(1);
    expect(fanOut.observe(0, "c", T0)).toBe(0);
  });
});

describe("card state codec", () => {
  const arbState = fc
    .record({
      hidden: fc.integer({ min: 0, max: 40 }),
      txCount: fc.nat({ max: 2 ** 32 - 1 }),
      doubles: fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), {
        minLength: 13,
        maxLength: 13,
      }),
      merchants: fc.array(fc.double({ min: 1, max: 2 ** 64, noNaN: true }), { maxLength: 16 }),
      devices: fc.array(fc.double({ min: 1, max: 2 ** 64, noNaN: true }), { maxLength: 4 }),
      country: fc.constantFrom("", "DE", "GB"),
    })
    .map(({ hidden, txCount, doubles: d, merchants, devices, country }): CardState => ({
      ...emptyCardState(hidden),
      h: Float32Array.from({ length: hidden }, (_, i) => Math.fround(Math.sin(i + d[0]!))),
      c: Float32Array.from({ length: hidden }, (_, i) => Math.fround(Math.cos(i * d[1]!))),
      txCount,
      lastEventTimeMs: d[0]!,
      amountLogMean: d[1]!,
      amountLogVar: d[2]!,
      amountLogMax: d[3]!,
      velocity: {
        txCount1h: d[4]!,
        txCount24h: d[5]!,
        amountEur24h: d[6]!,
        smallTxCount1h: d[7]!,
        newMerchantCount1h: d[8]!,
      },
      hourHabitSin: d[9]!,
      hourHabitCos: d[10]!,
      hourHabitWeight: d[11]!,
      lastInPersonTimeMs: d[12]!,
      lastMerchantCountry: country,
      lastInPersonCountry: country.toLowerCase(),
      recentMerchants: merchants,
      recentDevices: devices,
      recentIpPrefixes: devices.slice(0, 2),
    }));

  it("a card state survives encode/decode unchanged", () => {
    fc.assert(
      fc.property(arbState, (s) => {
        expect(decodeCardState(encodeCardState(s))).toEqual(s);
      }),
    );
  });

  it("states encoded back to back into one buffer, and decoded into one array, are the same states", () => {
    fc.assert(
      fc.property(fc.array(arbState, { minLength: 1, maxLength: 5 }), (states) => {
        const singles = states.map((s) => encodeCardState(s));
        const shared = new Uint8Array(singles.reduce((n, b) => n + b.length, 0) + 3);
        const view = new DataView(shared.buffer);
        let offset = 3;
        const parts = states.map((s, k) => {
          const end = encodeCardStateInto(s, shared, view, offset);
          expect(shared.subarray(offset, end)).toEqual(singles[k]);
          const part = shared.subarray(offset, end);
          offset = end;
          return part;
        });
        const hc = new Float32Array(states.reduce((n, s) => n + 2 * s.h.length, 0));
        let at = 0;
        parts.forEach((bytes, k) => {
          const n = 2 * states[k]!.h.length;
          const decoded = decodeCardState(bytes, hc.subarray(at, at + n));
          expect(decoded).toEqual(states[k]);
          // h and c are views of the shared array, not copies.
          expect(decoded.h.buffer).toBe(hc.buffer);
          expect(decoded.c.byteOffset).toBe(hc.byteOffset + 4 * (at + n / 2));
          at += n;
        });
      }),
    );
  });

  it("a shared array of the wrong size is not written to; a buffer too small is refused", () => {
    const s = replay([tx()]);
    const bytes = encodeCardState(s);
    const wrong = new Float32Array(3).fill(7);
    expect(decodeCardState(bytes, wrong)).toEqual(s);
    expect([...wrong]).toEqual([7, 7, 7]);
    const small = new Uint8Array(bytes.length - 1);
    expect(() => encodeCardStateInto(s, small, new DataView(small.buffer), 0)).toThrow(RangeError);
  });

  // v2's per-MCC-group usual amounts add 46 bytes (a count byte, 5 × f64 mean, 5 × u8 count).
  it("a state for a 32-unit LSTM with full sets fits in under 650 bytes", () => {
    const s = {
      ...emptyCardState(32),
      recentMerchants: Array(16).fill(1),
      recentDevices: Array(4).fill(2),
      recentIpPrefixes: Array(4).fill(3),
    };
    expect(encodeCardState(s).length).toBeLessThan(650);
  });

  it("h and c are stored as little-endian float32 right after the version and hidden size", () => {
    const s = emptyCardState(2);
    s.h = Float32Array.of(1.5, -2.25);
    s.c = Float32Array.of(0.1, 3);
    const bytes = encodeCardState(s);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    expect([view.getUint8(0), view.getUint16(1, true)]).toEqual([CARD_STATE_FORMAT_VERSION, 2]);
    expect([3, 7, 11, 15].map((o) => view.getFloat32(o, true))).toEqual([1.5, -2.25, Math.fround(0.1), 3]);
    // A value that is a view into a larger buffer (as Redis replies are) decodes the same.
    const padded = new Uint8Array(bytes.length + 5);
    padded.set(bytes, 5);
    expect(decodeCardState(padded.subarray(5))).toEqual(s);
  });

  it("truncated, versionless or padded bytes are rejected with a typed error", () => {
    const bytes = encodeCardState(replay([tx(), tx({ eventTimeMs: T0 + 1 })]));
    for (let n = 0; n < bytes.length; n++) {
      const r = tryDecodeCardState(bytes.subarray(0, n));
      expect(r.ok).toBe(false);
      if (!r.ok) expect(["empty", "truncated"]).toContain(r.error.kind);
    }
    const wrongVersion = bytes.slice();
    wrongVersion[0] = 9;
    expect(() => decodeCardState(wrongVersion)).toThrow(CardStateCodecError);
    const r = tryDecodeCardState(Uint8Array.from([...bytes, 0]));
    expect(r.ok || r.error.kind).toBe("malformed");
  });
});
