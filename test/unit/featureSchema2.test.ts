// card-features-2: the contract's optional geo / time-zone fields, the features computed from
// them and from the per-MCC-group usual amount, the state codec that carries it, and feeding
// models of the earlier schema their prefix of the vector.
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FEATURE_T0, featureTransaction } from "../support/transactions.js";
import { fraud } from "../../src/codec/generated/fraud.js";
import { Transaction } from "../../src/codec/messages.js";
import { advanceCardState, emptyCardState, type CardState } from "../../src/features/cardState.js";
import { decodeCardState, encodeCardState } from "../../src/features/cardStateCodec.js";
import {
  computeFeatureFacts,
  computeFeatures,
  FEATURE_COUNT,
  FEATURE_NAMES,
  FEATURE_SCHEMA_VERSION,
  FEATURE_SCHEMAS,
  featureWidthFor,
} from "../../src/features/featureVector.js";
import { haversineKm, localHourOfDay, MCC_GROUPS } from "../../src/features/transactionFacts.js";
import { computeFeatureHashes } from "../../src/ingest/featureHashes.js";
import { validateTransaction } from "../../src/ingest/validateTransaction.js";
import { verifyModelArtifact } from "../../src/model/verifyModelArtifact.js";
import { readTransactionsFile } from "../../src/codec/transactionFiles.js";
import { parseCsvMapping } from "../../src/tools/import/csvMapping.js";
import { importCsv, type RejectedRow } from "../../src/tools/import/importCsv.js";

const T0 = FEATURE_T0;
const tx = featureTransaction;
const facts = (t: fraud.v1.ITransaction, state: CardState = emptyCardState(0)) =>
  computeFeatureFacts(t, computeFeatureHashes(t), state, { deviceCardCount24h: 0 });
const replay = (txs: fraud.v1.ITransaction[]): CardState =>
  txs.reduce((s, t) => advanceCardState(s, t, computeFeatureHashes(t)), emptyCardState(4));

describe("haversine distance", () => {
  it("matches known great-circle distances at the contract's 0.1° resolution", () => {
    // Berlin (52.5, 13.4) → Paris (48.9, 2.4) at 0.1°: 870.8 km (878 km between the exact city
    // centres; checked against an independent haversine); one degree of latitude: 111.2 km.
    expect(haversineKm(525, 134, 489, 24)).toBeCloseTo(870.77, 1);
    expect(haversineKm(0, 0, 10, 0)).toBeCloseTo(111.19, 1);
    expect(haversineKm(0, 1799, 0, -1799)).toBeCloseTo(22.2, 0); // across the antimeridian
    expect(haversineKm(900, 0, -900, 0)).toBeCloseTo(Math.PI * 6371, 0);
  });

  it("feeds home_distance_km, with location_unknown when either end is missing", () => {
    const both = facts(
      tx({ cardHomeLocation: { latE1: 525, lonE1: 134 }, merchantLocation: { latE1: 489, lonE1: 24 } }),
    );
    expect(both.home_distance_km).toBeCloseTo(870.77, 1);
    expect(both.location_unknown).toBe(0);
    const noHome = facts(tx({ merchantLocation: { latE1: 489, lonE1: 24 } }));
    expect(noHome.home_distance_km).toBe(0);
    expect(noHome.location_unknown).toBe(1);
  });
});

describe("local hour", () => {
  it("reads the card's clock: a negative offset moves the hour back, across midnight too", () => {
    const at = (h: number, m = 0) => Date.UTC(2025, 0, 6, h, m);
    expect(localHourOfDay(tx({ eventTimeMs: at(12), cardUtcOffsetMinutes: -300 }))).toBe(7);
    expect(localHourOfDay(tx({ eventTimeMs: at(2), cardUtcOffsetMinutes: -300 }))).toBe(21);
    expect(localHourOfDay(tx({ eventTimeMs: at(23, 30), cardUtcOffsetMinutes: 330 }))).toBe(5);
    expect(localHourOfDay(tx({ eventTimeMs: at(12), cardUtcOffsetMinutes: 0 }))).toBe(12);
    expect(localHourOfDay(tx({ eventTimeMs: at(12) }))).toBeNaN();
  });

  it("local_hour_sin/cos put 03:00 local at a quarter turn before 09:00, and unknown at 0 with a flag", () => {
    const night = facts(tx({ eventTimeMs: Date.UTC(2025, 0, 6, 8), cardUtcOffsetMinutes: -300 }));
    expect(night.local_hour_sin).toBeCloseTo(Math.sin((2 * Math.PI * 3) / 24), 9);
    expect(night.local_hour_cos).toBeCloseTo(Math.cos((2 * Math.PI * 3) / 24), 9);
    expect(night.local_time_unknown).toBe(0);
    // The UTC hour features are card-features-1's and unchanged: 08:00 UTC.
    expect(night.hour_sin).toBeCloseTo(Math.sin((2 * Math.PI * 8) / 24), 9);
    const unknown = facts(tx());
    expect([unknown.local_hour_sin, unknown.local_hour_cos, unknown.local_time_unknown]).toEqual([0, 0, 1]);
  });
});

describe("usual amount per merchant-category group", () => {
  it("is the running mean of log amounts per group, then an EWMA capped at 20 transactions", () => {
    const groceries = [10, 20, 40].map((eur, i) =>
      tx({ transactionId: `g${i}`, amountMinor: eur * 100, eventTimeMs: T0 + i * 3_600_000 }),
    );
    const s = replay(groceries);
    const everyday = MCC_GROUPS.indexOf("everyday");
    const mean = [10, 20, 40].reduce((a, eur) => a + Math.log1p(eur), 0) / 3;
    expect(s.mccAmountLogMean[everyday]).toBeCloseTo(mean, 12);
    expect(s.mccAmountCount[everyday]).toBe(3);
    expect(s.mccAmountCount.reduce((a, b) => a + b)).toBe(3);
    // 400 € of groceries is log1p(400) − mean above the card's grocery habit.
    const next = facts(tx({ amountMinor: 40_000, eventTimeMs: T0 + 5 * 3_600_000 }), s);
    expect(next.amount_vs_mcc_usual).toBeCloseTo(Math.log1p(400) - mean, 12);
    expect(next.mcc_group_new).toBe(0);
    // The first electronics purchase: no usual amount yet (0), and a group the card never used.
    const tv = facts(tx({ mcc: 5732, amountMinor: 90_000, eventTimeMs: T0 + 6 * 3_600_000 }), s);
    expect(tv.amount_vs_mcc_usual).toBe(0);
    expect(tv.mcc_group_new).toBe(1);

    const many = replay(
      Array.from({ length: 30 }, (_, i) => tx({ transactionId: `x${i}`, eventTimeMs: T0 + i * 60_000 })),
    );
    expect(many.mccAmountCount[everyday]).toBe(20);
    const after = advanceCardState(
      many,
      tx({ amountMinor: 12_500, eventTimeMs: T0 + 31 * 60_000 }),
      computeFeatureHashes(tx()),
    );
    const m = many.mccAmountLogMean[everyday]!;
    expect(after.mccAmountLogMean[everyday]).toBeCloseTo(m + (Math.log1p(125) - m) / 21, 12);
  });
});

describe("card state codec v2", () => {
  it("round-trips the per-group statistics; v1 bytes decode with them empty", () => {
    const s = replay([
      tx(),
      tx({ transactionId: "t2", mcc: 5732, amountMinor: 99_999, eventTimeMs: T0 + 60_000 }),
    ]);
    const bytes = encodeCardState(s);
    expect(bytes[0]).toBe(2);
    const back = decodeCardState(bytes);
    expect(back).toEqual(s);
    expect(back.mccAmountCount).toEqual([0, 1, 0, 1, 0]);

    // A v1 state as a store written by the previous build holds it: no trailing group block.
    const v1 = bytes.slice(0, bytes.length - (1 + 9 * MCC_GROUPS.length));
    v1[0] = 1;
    const upgraded = decodeCardState(v1);
    expect(upgraded.txCount).toBe(2);
    expect(upgraded.mccAmountCount).toEqual([0, 0, 0, 0, 0]);
    expect(upgraded.amountLogMean).toBe(s.amountLogMean);
  });

  it("a wrong group count is malformed, not misread", () => {
    const bytes = encodeCardState(replay([tx()]));
    bytes[bytes.length - (1 + 9 * MCC_GROUPS.length)] = 4;
    expect(() => decodeCardState(bytes)).toThrow(/MCC groups/);
  });
});

describe("contract: optional geo and time-zone fields", () => {
  it("round-trip through the wire, absent stays absent (unknown), and an offset of 0 stays present", () => {
    const full = Transaction.create({
      ...tx(),
      merchantLocation: { latE1: -339, lonE1: 1512 },
      cardHomeLocation: { latE1: 0, lonE1: 0 },
      cardUtcOffsetMinutes: 0,
    } as fraud.v1.ITransaction);
    const back = Transaction.decode(Transaction.encode(full).finish());
    expect(back.merchantLocation).toEqual(expect.objectContaining({ latE1: -339, lonE1: 1512 }));
    expect(back.cardHomeLocation).toEqual(expect.objectContaining({ latE1: 0, lonE1: 0 }));
    expect(back.cardUtcOffsetMinutes).toBe(0);
    const bare = Transaction.decode(
      Transaction.encode(Transaction.create(tx() as fraud.v1.ITransaction)).finish(),
    );
    expect(bare.merchantLocation).toBeNull();
    expect(bare.cardUtcOffsetMinutes).toBeNull();
    expect(validateTransaction(bare).ok).toBe(true);
  });

  it("out-of-range values are validation errors naming the field", () => {
    const check = (over: Partial<fraud.v1.ITransaction>) => {
      const r = validateTransaction(Transaction.create({ ...tx(), ...over } as fraud.v1.ITransaction));
      return r.ok ? "ok" : `${r.error.kind} ${r.error.message}`;
    };
    expect(check({ merchantLocation: { latE1: 525, lonE1: 1800 } })).toBe("ok");
    expect(check({ merchantLocation: { latE1: 5250, lonE1: 134 } })).toMatch(
      /^value_out_of_range merchant_location lat_e1 5250/,
    );
    expect(check({ cardHomeLocation: { latE1: 0, lonE1: -1801 } })).toMatch(
      /card_home_location lon_e1 -1801/,
    );
    expect(check({ cardUtcOffsetMinutes: -720 })).toBe("ok");
    expect(check({ cardUtcOffsetMinutes: 841 })).toMatch(/card_utc_offset_minutes 841/);
    expect(check({ cardUtcOffsetMinutes: -3600 })).toMatch(/card_utc_offset_minutes -3600/);
  });
});

describe("schemas: an earlier schema's model takes its prefix of the vector", () => {
  it("card-features-1 is the first 33 features, unchanged; this build's schema is all of them", () => {
    expect(FEATURE_SCHEMA_VERSION).toBe("card-features-2");
    expect(FEATURE_SCHEMAS["card-features-1"]).toBe(33);
    expect(FEATURE_NAMES[32]).toBe("device_card_count_24h");
    expect(featureWidthFor("card-features-1", FEATURE_NAMES.slice(0, 33))).toEqual({ ok: true, width: 33 });
    expect(featureWidthFor(FEATURE_SCHEMA_VERSION, FEATURE_NAMES)).toEqual({
      ok: true,
      width: FEATURE_COUNT,
    });
  });

  it("refuses an unknown schema, a reordered list, or unknown names, saying which", () => {
    const unknown = featureWidthFor("card-features-9", FEATURE_NAMES);
    expect(unknown.ok || unknown.reason).toMatch(/"card-features-9" is unknown/);
    const swapped = [...FEATURE_NAMES.slice(0, 33)];
    [swapped[0], swapped[1]] = [swapped[1]!, swapped[0]!];
    expect(featureWidthFor("card-features-1", swapped).ok).toBe(false);
    const renamed = featureWidthFor("card-features-1", [...FEATURE_NAMES.slice(0, 32), "moon_phase"]);
    expect(renamed.ok || renamed.reason).toMatch(/unknown: moon_phase/);
  });

  it("computeFeatures writes only the model's width to x, and all raw values for the rules", () => {
    const t = tx({ cardUtcOffsetMinutes: 60, merchantLocation: { latE1: 1, lonE1: 1 } });
    const full = new Float32Array(FEATURE_COUNT);
    computeFeatures(t, computeFeatureHashes(t), emptyCardState(0), { deviceCardCount24h: 0 }, full, 0);
    const x = new Float32Array(33 + 1).fill(-9);
    const raw = new Float64Array(FEATURE_COUNT);
    computeFeatures(
      t,
      computeFeatureHashes(t),
      emptyCardState(0),
      { deviceCardCount24h: 0 },
      x,
      0,
      raw,
      33,
      0,
    );
    expect([...x.subarray(0, 33)]).toEqual([...full.subarray(0, 33)]);
    expect(x[33]).toBe(-9);
    expect(raw[FEATURE_NAMES.indexOf("local_time_unknown")]).toBe(0);
  });

  it("the shipped card-features-1 models verify and load as a 33-feature prefix", async () => {
    for (const version of ["1.0.0", "1.1.0"]) {
      const manifest = await verifyModelArtifact(`models/fraud-lstm/${version}`, {
        trustedKeysDir: "models/trusted-keys",
        expectedFeatureSchemaVersion: FEATURE_SCHEMA_VERSION,
      });
      expect(manifest.featureSchemaVersion).toBe("card-features-1");
      expect(manifest.featureCount).toBe(33);
    }
  });
});

describe("import csv: the geo and time-zone columns", () => {
  it("maps decimal degrees to 0.1°, zones to the offset at each row's time, and reports bad rows by line", async () => {
    const dir = await mkdtemp(join(tmpdir(), "import-geo-"));
    const csv = [
      "id,card,amt,ts,mlat,mlon,hlat,hlon,tz,fraud",
      "a1,c1,12.50,2025-01-15 12:00:00,52.52,13.41,48.86,2.35,Europe/Berlin,0", // winter: +60
      "a2,c1,12.50,2025-07-15 12:00:00,52.52,13.41,,,America/New_York,1", // summer: -240, no home
      "a3,c1,12.50,2025-07-15 13:00:00,,,,,,0", // nothing known
      "a4,c1,12.50,2025-07-15 14:00:00,95.0,13.4,,,+01:00,0", // latitude beyond the pole
      "a5,c1,12.50,2025-07-15 15:00:00,52.5,,,,+01:00,0", // half a location
      "a6,c1,12.50,2025-07-15 16:00:00,52.5,13.4,,,Mars/Olympus,0", // no such zone
      "a7,c1,12.50,2025-07-15 17:00:00,52.5,13.4,,,-03:30,0",
    ].join("\n");
    await writeFile(join(dir, "export.csv"), csv);
    const mapping = parseCsvMapping(
      `fields:
  transaction_id: id
  card_id: card
  merchant_id: { fixed: m1 }
  channel: { fixed: card_present }
  merchant_lat: mlat
  merchant_lon: mlon
  card_home_lat: hlat
  card_home_lon: hlon
  card_time_zone: tz
event_time: { column: ts, format: "yyyy-MM-dd HH:mm:ss" }
amount: { column: amt, units: major }
currency: { fixed: EUR }
label: { column: fraud }
`,
      "geo.yaml",
    );
    const rejects: RejectedRow[] = [];
    const summary = await importCsv({
      csvPath: join(dir, "export.csv"),
      mapping,
      mappingSource: "geo.yaml",
      outDir: join(dir, "out"),
      onReject: (r) => rejects.push(r),
    });
    expect(summary.imported).toBe(4);
    expect(rejects.map((r) => r.line)).toEqual([5, 6, 7]);
    expect(rejects[0]!.reason).toMatch(/merchant_location lat_e1 950 is not in -900..900/);
    expect(rejects[1]!.reason).toMatch(/merchant_lat and merchant_lon must both be given/);
    expect(rejects[2]!.reason).toMatch(/card_time_zone "Mars\/Olympus" is not a time zone/);
    const txs = await readTransactionsFile(summary.files.transactions);
    const byId = new Map(txs.map((t) => [t.transactionId, t]));
    expect(byId.get("a1")!.merchantLocation).toEqual(expect.objectContaining({ latE1: 525, lonE1: 134 }));
    expect(byId.get("a1")!.cardHomeLocation).toEqual(expect.objectContaining({ latE1: 489, lonE1: 24 }));
    expect(byId.get("a1")!.cardUtcOffsetMinutes).toBe(60);
    expect(byId.get("a2")!.cardUtcOffsetMinutes).toBe(-240);
    expect(byId.get("a2")!.cardHomeLocation ?? null).toBeNull();
    expect(byId.get("a3")!.merchantLocation ?? null).toBeNull();
    expect(byId.get("a3")!.cardUtcOffsetMinutes ?? null).toBeNull();
    expect(byId.get("a7")!.cardUtcOffsetMinutes).toBe(-210);
  });
});
