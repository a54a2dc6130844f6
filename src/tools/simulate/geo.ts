// Where the simulated world is: coarse locations (tenths of a degree, as the contract carries
// them) and the cards' time zones. Every location is drawn from a Random seeded by the entity's
// id and the simulation seed, never from the simulator's own streams, so adding geography left
// every other field of a seed's output exactly as it was.
import type { fraud } from "../../codec/generated/fraud.js";
import { Random } from "./random.js";
import type { Card, Country } from "./world.js";

/** Rough centre and half-extent (degrees) of each simulated country. */
const AREAS: Readonly<Record<string, readonly [lat: number, lon: number, dLat: number, dLon: number]>> = {
  DE: [51, 10.4, 2, 3],
  FR: [46.6, 2.4, 2.5, 3],
  NL: [52.2, 5.3, 0.7, 1],
  ES: [40.2, -3.6, 2.5, 4],
  IT: [42.8, 12.5, 3, 3],
  GB: [53, -1.5, 2.5, 1.5],
  US: [39.5, -95, 6, 20],
  PL: [52, 19.4, 2, 3],
  PT: [39.6, -8, 2, 0.7],
  GR: [39, 22, 2, 2],
  TH: [15, 101, 4, 2],
  MX: [23, -102, 5, 8],
  BR: [-12, -50, 8, 8],
  NG: [9, 8, 3, 4],
  RO: [45.9, 25, 1.5, 3],
  VN: [16, 107, 5, 1.5],
  RU: [56, 40, 3, 15],
};

/** Cities per country: a card lives in one, merchants trade in them. */
const CITIES = 6;
/** Local shopping happens within this many degrees of home (~20 km). */
const NEIGHBOURHOOD_DEG = 0.2;

const hashString = (s: string): number => {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
};

export class Geography {
  readonly #seed: number;
  constructor(seed: number) {
    this.#seed = seed >>> 0;
  }

  #rng(key: string): Random {
    return new Random(hashString(key) ^ this.#seed);
  }

  #point(lat: number, lon: number): fraud.v1.IGeoPoint {
    const clampLat = Math.max(-90, Math.min(90, lat));
    const wrappedLon = ((((lon + 180) % 360) + 360) % 360) - 180;
    return { latE1: Math.round(clampLat * 10), lonE1: Math.round(wrappedLon * 10) };
  }

  /** Centre of city `k` of a country (fixed per seed). */
  #city(country: Country, k: number): readonly [number, number] {
    const [lat, lon, dLat, dLon] = AREAS[country.code]!;
    const r = this.#rng(`city:${country.code}:${k}`);
    return [lat + r.uniform(-dLat, dLat), lon + r.uniform(-dLon, dLon)];
  }

  /** The card's home area; about 1 card in 25 has none on file (unknown). */
  cardHome(card: Card): fraud.v1.IGeoPoint | null {
    const r = this.#rng(`home:${card.id}`);
    if (r.chance(0.04)) return null;
    const [lat, lon] = this.#city(card.home, r.int(0, CITIES - 1));
    return this.#point(lat + r.uniform(-0.1, 0.1), lon + r.uniform(-0.1, 0.1));
  }

  /** The card's UTC offset in minutes; about 1 card in 20 has no time zone on file. */
  cardUtcOffsetMinutes(card: Card): number | null {
    return this.#rng(`tz:${card.id}`).chance(0.05) ? null : card.home.utcOffsetHours * 60;
  }

  /** A terminal in the cardholder's own neighbourhood. */
  nearHome(home: fraud.v1.IGeoPoint, key: string): fraud.v1.IGeoPoint {
    const r = this.#rng(`near:${key}`);
    return this.#point(
      home.latE1! / 10 + r.uniform(-NEIGHBOURHOOD_DEG, NEIGHBOURHOOD_DEG),
      home.lonE1! / 10 + r.uniform(-NEIGHBOURHOOD_DEG, NEIGHBOURHOOD_DEG),
    );
  }

  /** Somewhere in one of a country's cities (a merchant's seat, or where a fraudster is). */
  inCountry(country: Country, key: string): fraud.v1.IGeoPoint {
    const r = this.#rng(`at:${key}`);
    const [lat, lon] = this.#city(country, r.int(0, CITIES - 1));
    return this.#point(lat + r.uniform(-0.15, 0.15), lon + r.uniform(-0.15, 0.15));
  }
}
