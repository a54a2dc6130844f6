// The simulated world: countries, merchants and cardholders with habits. Everything is drawn
// from one seeded Random, so a seed names a world.
import { Random } from "./random.js";

export interface Country {
  readonly code: string;
  readonly currency: string;
  /** Units of the local currency per euro, so simulated amounts read naturally. */
  readonly perEur: number;
  readonly utcOffsetHours: number;
  /** First two octets of the IPv4 space the simulator hands out there. */
  readonly ipBlocks: readonly (readonly [number, number])[];
}

const country = (
  code: string,
  currency: string,
  perEur: number,
  utcOffsetHours: number,
  ...ipBlocks: [number, number][]
): Country => ({
  code,
  currency,
  perEur,
  utcOffsetHours,
  ipBlocks,
});

export const HOME_COUNTRIES: readonly Country[] = [
  country("DE", "EUR", 1, 1, [85, 12], [91, 64], [178, 20]),
  country("FR", "EUR", 1, 1, [82, 120], [90, 8], [176, 140]),
  country("NL", "EUR", 1, 1, [77, 160], [84, 80]),
  country("ES", "EUR", 1, 1, [83, 32], [88, 0]),
  country("IT", "EUR", 1, 1, [79, 0], [93, 32]),
  country("GB", "GBP", 0.855, 0, [81, 96], [86, 128], [109, 144]),
  country("US", "USD", 1.087, -5, [24, 0], [67, 160], [73, 32]),
  country("PL", "PLN", 4.35, 1, [83, 0], [89, 64]),
];
export const HOME_WEIGHTS = [0.26, 0.17, 0.08, 0.1, 0.1, 0.13, 0.1, 0.06];

/** Where legitimate travellers go (besides the home countries) and where fraud comes from. */
export const TRAVEL_COUNTRIES: readonly Country[] = [
  country("PT", "EUR", 1, 0, [85, 240]),
  country("GR", "EUR", 1, 2, [94, 64]),
  country("TH", "THB", 38, 7, [110, 164]),
  country("MX", "MXN", 18.5, -6, [187, 128]),
];
export const FRAUD_COUNTRIES: readonly Country[] = [
  country("BR", "BRL", 5.5, -3, [177, 32], [189, 0]),
  country("NG", "NGN", 1600, 1, [105, 112], [197, 210]),
  country("RO", "EUR", 1, 2, [86, 120], [5, 12]),
  country("VN", "VND", 27000, 7, [113, 160], [14, 160]),
  country("RU", "RUB", 98, 3, [95, 24], [188, 162]),
];

export type MerchantKind =
  | "grocery"
  | "restaurant"
  | "fuel"
  | "pharmacy"
  | "transit"
  | "online_retail"
  | "electronics"
  | "digital_goods"
  | "streaming"
  | "utilities"
  | "airline"
  | "hotel"
  | "jewelry"
  | "crypto"
  | "money_transfer"
  | "gambling"
  | "department";

export type ChannelMix = "in_person" | "online" | "mixed" | "recurring";

interface KindSpec {
  readonly mccs: readonly number[];
  readonly channel: ChannelMix;
  /** Median amount in EUR and log-normal spread. */
  readonly median: number;
  readonly sigma: number;
  /** Share of everyday spending, and how many merchants of this kind a country has. */
  readonly weight: number;
  readonly perCountry: number;
}

export const KINDS: Readonly<Record<MerchantKind, KindSpec>> = {
  grocery: { mccs: [5411, 5499], channel: "in_person", median: 35, sigma: 0.6, weight: 30, perCountry: 80 },
  restaurant: {
    mccs: [5812, 5814, 5813],
    channel: "in_person",
    median: 22,
    sigma: 0.6,
    weight: 20,
    perCountry: 120,
  },
  fuel: { mccs: [5541, 5542], channel: "in_person", median: 55, sigma: 0.35, weight: 7, perCountry: 30 },
  pharmacy: { mccs: [5912], channel: "in_person", median: 18, sigma: 0.6, weight: 4, perCountry: 30 },
  transit: { mccs: [4111, 4121], channel: "in_person", median: 3.5, sigma: 0.5, weight: 8, perCountry: 6 },
  online_retail: {
    mccs: [5311, 5999, 5691],
    channel: "online",
    median: 45,
    sigma: 0.8,
    weight: 11,
    perCountry: 40,
  },
  electronics: { mccs: [5732, 5045], channel: "mixed", median: 140, sigma: 0.9, weight: 2, perCountry: 15 },
  digital_goods: { mccs: [5816, 5734], channel: "online", median: 4, sigma: 0.7, weight: 4, perCountry: 12 },
  streaming: { mccs: [4899], channel: "recurring", median: 12, sigma: 0.3, weight: 0, perCountry: 6 },
  utilities: { mccs: [4900, 4814], channel: "recurring", median: 60, sigma: 0.5, weight: 0, perCountry: 6 },
  airline: { mccs: [4511, 3001], channel: "online", median: 280, sigma: 0.6, weight: 0.6, perCountry: 5 },
  hotel: { mccs: [7011], channel: "mixed", median: 180, sigma: 0.6, weight: 0.6, perCountry: 25 },
  jewelry: { mccs: [5944], channel: "in_person", median: 160, sigma: 0.9, weight: 0.5, perCountry: 10 },
  crypto: { mccs: [6051], channel: "online", median: 150, sigma: 1, weight: 0.4, perCountry: 3 },
  money_transfer: { mccs: [4829], channel: "online", median: 120, sigma: 0.9, weight: 0.6, perCountry: 3 },
  gambling: { mccs: [7995], channel: "online", median: 30, sigma: 0.9, weight: 0.6, perCountry: 4 },
  department: { mccs: [5311, 5651], channel: "in_person", median: 60, sigma: 0.8, weight: 6, perCountry: 20 },
};
export const EVERYDAY_KINDS = (Object.keys(KINDS) as MerchantKind[]).filter((k) => KINDS[k].weight > 0);

export interface Merchant {
  readonly id: string;
  readonly kind: MerchantKind;
  readonly mcc: number;
  readonly country: Country;
}

export interface Subscription {
  readonly merchant: Merchant;
  readonly amountEur: number;
  readonly dayOfMonth: number;
}

export interface Card {
  readonly id: string;
  readonly home: Country;
  readonly bin: string;
  /** Everyday transactions per day. */
  readonly rate: number;
  readonly amountFactor: number;
  /** Local hour around which the card is used. */
  readonly peakHour: number;
  readonly favourites: readonly Merchant[];
  readonly favouriteWeights: readonly number[];
  readonly devices: string[];
  readonly ipPrefixes: readonly string[];
  readonly subscriptions: readonly Subscription[];
  /** Propensity to try new merchants. */
  readonly exploration: number;
}

export interface World {
  readonly merchants: ReadonlyMap<string, readonly Merchant[]>; // by country code
  readonly cards: readonly Card[];
  /** E-commerce merchants card testers like: digital goods, donations, small web shops. */
  readonly testingMerchants: readonly Merchant[];
}

const kindCache = new WeakMap<World, Map<string, readonly Merchant[]>>();

/** Merchants of some kinds in a country (memoised: the simulator asks per transaction). */
export function merchantsOf(
  world: World,
  country: Country,
  kinds: readonly MerchantKind[],
): readonly Merchant[] {
  let cache = kindCache.get(world);
  if (cache === undefined) kindCache.set(world, (cache = new Map()));
  const key = `${country.code}:${kinds.join(",")}`;
  let list = cache.get(key);
  if (list === undefined) {
    list = world.merchants.get(country.code)!.filter((m) => kinds.includes(m.kind));
    cache.set(key, list);
  }
  return list;
}

export const randomIp = (rng: Random, c: Country): string => {
  const [a, b] = rng.pick(c.ipBlocks);
  return `${a}.${b + rng.int(0, 15)}.${rng.int(0, 255)}.${rng.int(1, 254)}`;
};

export const ipInPrefix = (rng: Random, prefix: string): string => `${prefix}.${rng.int(1, 254)}`;

const prefixOf = (ip: string): string => ip.split(".").slice(0, 3).join(".");

export function createWorld(rng: Random, cardCount: number): World {
  const merchants = new Map<string, Merchant[]>();
  for (const c of [...HOME_COUNTRIES, ...TRAVEL_COUNTRIES, ...FRAUD_COUNTRIES]) {
    const list: Merchant[] = [];
    for (const kind of Object.keys(KINDS) as MerchantKind[]) {
      const spec = KINDS[kind];
      const n = Math.max(2, Math.round(spec.perCountry * (HOME_COUNTRIES.includes(c) ? 1 : 0.4)));
      for (let i = 0; i < n; i++) {
        list.push({ id: `m-${c.code}-${kind}-${i}`, kind, mcc: rng.pick(spec.mccs), country: c });
      }
    }
    merchants.set(c.code, list);
  }
  const testingMerchants: Merchant[] = [];
  for (let i = 0; i < 40; i++) {
    const c = rng.chance(0.6) ? rng.pick(HOME_COUNTRIES) : rng.pick(FRAUD_COUNTRIES);
    testingMerchants.push({
      id: `m-${c.code}-webshop-${i}`,
      kind: "digital_goods",
      mcc: rng.pick([5816, 5967, 5999, 8398]),
      country: c,
    });
  }

  const cards: Card[] = [];
  const familyDevices: string[] = [];
  for (let i = 0; i < cardCount; i++) {
    const home = rng.weighted(HOME_COUNTRIES, HOME_WEIGHTS);
    const local = merchants.get(home.code)!;
    const nFav = rng.int(6, 16);
    const favourites: Merchant[] = [];
    const kindWeights = EVERYDAY_KINDS.map((k) => KINDS[k].weight * rng.uniform(0.3, 1.7));
    while (favourites.length < nFav) {
      const kind = rng.weighted(EVERYDAY_KINDS, kindWeights);
      const candidates = local.filter((m) => m.kind === kind);
      const m = rng.pick(candidates);
      if (!favourites.includes(m)) favourites.push(m);
    }
    const devices = [`dev-${rng.hex(8)}`];
    if (rng.chance(0.35)) devices.push(`dev-${rng.hex(8)}`);
    // Families share a tablet or laptop: a few legitimately shared devices.
    if (rng.chance(0.08)) {
      if (familyDevices.length > 0 && rng.chance(0.6)) devices.push(rng.pick(familyDevices));
      else familyDevices.push(devices[0]!);
    }
    const ipPrefixes = [prefixOf(randomIp(rng, home))];
    if (rng.chance(0.5)) ipPrefixes.push(prefixOf(randomIp(rng, home)));
    const subscriptions: Subscription[] = [];
    for (let s = rng.int(0, 3); s > 0; s--) {
      const kind = rng.chance(0.6) ? "streaming" : "utilities";
      subscriptions.push({
        merchant: rng.pick(local.filter((m) => m.kind === kind)),
        amountEur: Math.round(rng.logNormal(KINDS[kind].median, KINDS[kind].sigma) * 100) / 100,
        dayOfMonth: rng.int(1, 28),
      });
    }
    cards.push({
      id: `card-${String(i).padStart(6, "0")}`,
      home,
      bin: String(rng.pick([400000, 411111, 424242, 510000, 520000, 550000]) + rng.int(0, 99)),
      rate: Math.min(6, rng.logNormal(1.1, 0.6)),
      amountFactor: rng.logNormal(1, 0.45),
      peakHour: Math.min(21, Math.max(8, rng.normal(14, 2.5))),
      favourites,
      favouriteWeights: favourites.map((_, k) => 1 / (k + 1) ** 0.8),
      devices,
      ipPrefixes,
      subscriptions,
      exploration: rng.uniform(0.05, 0.2),
    });
  }
  return { merchants, cards, testingMerchants };
}
