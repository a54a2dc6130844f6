// Seeded payment simulator: cardholders with habits, plus labelled fraud typologies laid over
// their histories. The output is a time-ordered list of transactions with ground truth and
// (noisy) labels; `writeSimulation` in ../dataset splits it by time into files.
import { fraud } from "../../codec/generated/fraud.js";
import { Geography } from "./geo.js";
import { Random } from "./random.js";
import {
  createWorld,
  FRAUD_COUNTRIES,
  HOME_COUNTRIES,
  ipInPrefix,
  KINDS,
  merchantsOf,
  randomIp,
  TRAVEL_COUNTRIES,
  type Card,
  type Country,
  type Merchant,
  type MerchantKind,
  type World,
} from "./world.js";

export type Typology = "legit" | "card_testing" | "account_takeover" | "stolen_card_spree";

export interface SimulatedTransaction {
  readonly tx: fraud.v1.ITransaction;
  /** The label a payment company would have: ground truth after label noise. */
  readonly isFraud: boolean;
  readonly typology: Typology;
  /** Part of a fraud campaign run from a device shared across victims. */
  readonly ring: boolean;
}

export interface SimulationOptions {
  readonly seed: number;
  readonly cards: number;
  readonly days: number;
  readonly startMs?: number;
  /** Fraud episodes per card per 90 days (so the fraud rate does not depend on the period's length). */
  readonly episodesPerCard?: number;
  /** Share of fraud transactions labelled legitimate (unreported), and of legitimate labelled fraud. */
  readonly missedFraudRate?: number;
  readonly falseFraudRate?: number;
  /**
   * Multiplies every amount as written (not the behaviour behind it): a distribution shift such
   * as inflation or a new market's price level, for drift tests. Default 1.
   */
  readonly amountScale?: number;
}

const { Channel } = fraud.v1;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
export const DEFAULT_START_MS = Date.UTC(2025, 0, 6); // a Monday

interface Draft {
  card: Card;
  merchant: Merchant;
  amountEur: number;
  channel: fraud.v1.Channel;
  timeMs: number;
  deviceId: string;
  ip: string;
  typology: Typology;
  ring: boolean;
}

const EVERYDAY_NON_RECURRING = (Object.keys(KINDS) as MerchantKind[]).filter(
  (k) => KINDS[k].weight > 0 && KINDS[k].channel !== "recurring",
);
const TRAVEL_KINDS = (Object.keys(KINDS) as MerchantKind[]).filter(
  (k) => KINDS[k].channel === "in_person" || k === "hotel",
);
const SPREE_KINDS: MerchantKind[] = [
  "grocery",
  "electronics",
  "jewelry",
  "fuel",
  "department",
  "pharmacy",
  "restaurant",
];

const inPersonChannel = (rng: Random, kind: MerchantKind, amountEur: number): fraud.v1.Channel =>
  kind === "transit" || (amountEur < 50 && rng.chance(0.6))
    ? Channel.CHANNEL_CONTACTLESS
    : Channel.CHANNEL_CARD_PRESENT;

function legitimateHistory(
  rng: Random,
  world: World,
  card: Card,
  startMs: number,
  days: number,
  out: Draft[],
): void {
  const everydayLocal = merchantsOf(world, card.home, EVERYDAY_NON_RECURRING);
  const trip = rng.chance(0.3)
    ? (() => {
        const destination = rng.pick([...TRAVEL_COUNTRIES, ...HOME_COUNTRIES.filter((c) => c !== card.home)]);
        const from = rng.int(0, days - 3);
        return {
          destination,
          from,
          to: from + rng.int(3, 10),
          merchants: merchantsOf(world, destination, TRAVEL_KINDS),
        };
      })()
    : null;
  const devices = card.devices.slice();
  const deviceChangeDay = rng.chance(0.06) ? rng.int(0, days - 1) : -1;
  const gamer = rng.chance(0.12);
  const push = (d: Omit<Draft, "card" | "typology" | "ring">): void => {
    out.push({ ...d, card, typology: "legit", ring: false });
  };
  const onlineContext = (): { deviceId: string; ip: string } => ({
    deviceId: rng.chance(0.97) ? rng.pick(devices) : `dev-${rng.hex(8)}`,
    ip: rng.chance(0.85) ? ipInPrefix(rng, rng.pick(card.ipPrefixes)) : randomIp(rng, card.home),
  });
  const localHourToMs = (day: number, localHour: number, country: Country): number =>
    startMs + day * DAY + Math.round((localHour - country.utcOffsetHours) * HOUR);

  for (let day = 0; day < days; day++) {
    if (day === deviceChangeDay) devices[0] = `dev-${rng.hex(8)}`;
    const travelling = trip !== null && day >= trip.from && day < trip.to;
    const n = rng.poisson(card.rate * (travelling ? 1.4 : 1));
    for (let i = 0; i < n; i++) {
      const hour = rng.chance(0.04)
        ? rng.uniform(0, 24)
        : Math.min(23.9, Math.max(6, rng.normal(card.peakHour, 3.2)));
      let merchant: Merchant;
      let where = card.home;
      if (travelling && rng.chance(0.8)) {
        where = trip.destination;
        merchant = rng.pick(trip.merchants);
      } else if (rng.chance(card.exploration)) {
        merchant = rng.pick(everydayLocal);
      } else {
        merchant = rng.weighted(card.favourites, card.favouriteWeights);
      }
      const spec = KINDS[merchant.kind];
      const amountEur = Math.min(5000, rng.logNormal(spec.median * card.amountFactor, spec.sigma));
      const online = spec.channel === "online" || (spec.channel === "mixed" && rng.chance(0.5));
      const timeMs = localHourToMs(day, hour, where);
      if (online)
        push({ merchant, amountEur, channel: Channel.CHANNEL_ECOMMERCE, timeMs, ...onlineContext() });
      else
        push({
          merchant,
          amountEur,
          channel: inPersonChannel(rng, merchant.kind, amountEur),
          timeMs,
          deviceId: "",
          ip: "",
        });
    }
    if (rng.chance(0.025)) {
      const atm = rng.pick(merchantsOf(world, travelling ? trip.destination : card.home, ["grocery"]));
      push({
        merchant: { ...atm, id: `atm-${atm.country.code}-${rng.int(0, 40)}`, mcc: 6011 },
        amountEur: 20 * rng.int(2, 15),
        channel: Channel.CHANNEL_ATM,
        timeMs: localHourToMs(day, rng.uniform(8, 22), travelling ? trip.destination : card.home),
        deviceId: "",
        ip: "",
      });
    }
    // Occasional big-ticket purchases: legitimate high amounts at risky-looking merchants.
    if (rng.chance(1 / 40)) {
      const kind = rng.pick<MerchantKind>([
        "electronics",
        "airline",
        "hotel",
        "jewelry",
        "online_retail",
        "crypto",
      ]);
      const merchant = rng.pick(merchantsOf(world, card.home, [kind]));
      const online = KINDS[kind].channel !== "in_person" && rng.chance(0.7);
      push({
        merchant,
        amountEur: Math.min(6000, rng.logNormal(450, 0.7)),
        channel: online ? Channel.CHANNEL_ECOMMERCE : Channel.CHANNEL_CARD_PRESENT,
        timeMs: localHourToMs(day, rng.uniform(9, 22), card.home),
        ...(online ? onlineContext() : { deviceId: "", ip: "" }),
      });
    }
    // In-app purchases come in bursts of small online charges: the legitimate look-alike of card testing.
    if (gamer && rng.chance(1 / 12)) {
      const merchant = rng.pick(merchantsOf(world, card.home, ["digital_goods"]));
      let t = localHourToMs(day, rng.uniform(17, 23.5), card.home);
      const ctx = onlineContext();
      for (let k = rng.int(2, 4); k > 0; k--, t += rng.exponential(6 * MINUTE)) {
        push({
          merchant,
          amountEur: rng.pick([0.99, 1.99, 2.99, 4.99]),
          channel: Channel.CHANNEL_ECOMMERCE,
          timeMs: t,
          ...ctx,
        });
      }
    }
    const dayOfMonth = new Date(startMs + day * DAY).getUTCDate();
    for (const s of card.subscriptions) {
      if (s.dayOfMonth !== dayOfMonth) continue;
      push({
        merchant: s.merchant,
        amountEur: s.amountEur,
        channel: Channel.CHANNEL_RECURRING,
        timeMs: startMs + day * DAY + Math.round(rng.uniform(2, 6) * HOUR),
        deviceId: "",
        ip: "",
      });
    }
  }
}

interface FraudContext {
  rng: Random;
  world: World;
  victim: Card;
  t0: number;
  deviceId: string;
  ring: boolean;
  out: Draft[];
}

const fraudIp = (rng: Random, victim: Card): string =>
  rng.chance(0.7) ? randomIp(rng, rng.pick(FRAUD_COUNTRIES)) : randomIp(rng, victim.home);

const cashOutMerchant = (ctx: FraudContext, kinds: readonly MerchantKind[]): Merchant => {
  const { rng, world, victim } = ctx;
  const where = rng.chance(0.6) ? victim.home : rng.pick([...HOME_COUNTRIES, ...FRAUD_COUNTRIES]);
  return rng.pick(merchantsOf(world, where, kinds));
};

/** Tiny charges at web shops the card never used, then (usually) a large one. */
function cardTesting(ctx: FraudContext): void {
  const { rng, victim, out, deviceId, ring } = ctx;
  const ip = fraudIp(rng, victim);
  let t = ctx.t0;
  const shops = rng.shuffle(ctx.world.testingMerchants.slice());
  const probes = rng.int(2, 7);
  for (let i = 0; i < probes; i++) {
    out.push({
      card: victim,
      merchant: shops[i]!,
      amountEur: rng.uniform(0.5, 3),
      channel: Channel.CHANNEL_ECOMMERCE,
      timeMs: t,
      deviceId,
      ip,
      typology: "card_testing",
      ring,
    });
    t += 20_000 + rng.exponential(3 * MINUTE);
  }
  if (rng.chance(0.12)) return;
  t += 2 * MINUTE + rng.exponential(40 * MINUTE);
  for (let k = rng.int(1, 2); k > 0; k--) {
    const merchant = cashOutMerchant(ctx, [
      "online_retail",
      "electronics",
      "crypto",
      "money_transfer",
      "gambling",
    ]);
    out.push({
      card: victim,
      merchant,
      amountEur: rng.uniform(80, 1400),
      channel: Channel.CHANNEL_ECOMMERCE,
      timeMs: t,
      deviceId,
      ip,
      typology: "card_testing",
      ring,
    });
    t += rng.exponential(20 * MINUTE);
  }
}

/** Someone else logs in: new device, foreign or proxy IP, high amounts at resellable or risky merchants. */
function accountTakeover(ctx: FraudContext): void {
  const { rng, victim, out, deviceId, ring } = ctx;
  const ip = fraudIp(rng, victim);
  const lowAndSlow = rng.chance(0.25);
  let t = ctx.t0;
  for (let k = rng.int(1, 3); k > 0; k--) {
    const merchant = cashOutMerchant(ctx, [
      "crypto",
      "money_transfer",
      "electronics",
      "online_retail",
      "gambling",
      "jewelry",
    ]);
    const amountEur = lowAndSlow
      ? rng.uniform(60, 250)
      : Math.min(4000, Math.max(150, rng.logNormal(650, 0.6)));
    out.push({
      card: victim,
      merchant,
      amountEur,
      channel: Channel.CHANNEL_ECOMMERCE,
      timeMs: t,
      deviceId,
      ip,
      typology: "account_takeover",
      ring,
    });
    t += 5 * MINUTE + rng.exponential(45 * MINUTE);
  }
}

/** A stolen or cloned card used in person across many new shops in a few hours, often abroad. */
function stolenCardSpree(ctx: FraudContext): void {
  const { rng, world, victim, out } = ctx;
  const where = rng.chance(0.45) ? rng.pick([...FRAUD_COUNTRIES, ...TRAVEL_COUNTRIES]) : victim.home;
  const shops = merchantsOf(world, where, SPREE_KINDS);
  let t = ctx.t0;
  for (let k = rng.int(3, 10); k > 0; k--) {
    const atm = rng.chance(0.15);
    const merchant = atm
      ? { ...rng.pick(shops), id: `atm-${where.code}-${rng.int(0, 40)}`, mcc: 6011 }
      : rng.pick(shops);
    const amountEur = atm
      ? 50 * rng.int(2, 10)
      : Math.min(2500, rng.logNormal(KINDS[merchant.kind].median * 2.2, 0.7));
    const channel = atm ? Channel.CHANNEL_ATM : inPersonChannel(rng, merchant.kind, amountEur);
    out.push({
      card: victim,
      merchant,
      amountEur,
      channel,
      timeMs: t,
      deviceId: "",
      ip: "",
      typology: "stolen_card_spree",
      ring: false,
    });
    t += 3 * MINUTE + rng.exponential(18 * MINUTE);
  }
}

/**
 * Many stolen-card episodes start while the cardholder sleeps (fewer chances to notice): a third
 * of solo episodes move to 00:00–05:00 on the victim's own clock, the same day. Decided by the
 * episode's own Random so the simulator's shared streams draw exactly as before.
 */
function atNightSometimes(seed: number, episode: number, victim: Card, t0: number): number {
  const r = new Random((seed ^ Math.imul(episode + 1, 0x9e3779b1)) >>> 0);
  if (!r.chance(0.35)) return t0;
  const offsetMs = victim.home.utcOffsetHours * HOUR;
  const localDay = Math.floor((t0 + offsetMs) / DAY) * DAY;
  return Math.max(t0 - 12 * HOUR, localDay + r.uniform(0, 5) * HOUR - offsetMs);
}

export function simulatePayments(options: SimulationOptions): SimulatedTransaction[] {
  const { seed, cards: cardCount, days } = options;
  const startMs = options.startMs ?? DEFAULT_START_MS;
  const episodesPerCard = options.episodesPerCard ?? 0.2;
  const missed = options.missedFraudRate ?? 0.03;
  const falseFraud = options.falseFraudRate ?? 0.0003;
  const amountScale = options.amountScale ?? 1;
  const root = new Random(seed);
  const world = createWorld(root.fork(), cardCount);
  const drafts: Draft[] = [];

  const legitRng = root.fork();
  for (const card of world.cards) legitimateHistory(legitRng.fork(), world, card, startMs, days, drafts);

  const fraudRng = root.fork();
  const episodes = Math.round((episodesPerCard * cardCount * days) / 90);
  const earliest = startMs + 2 * DAY;
  const span = (days - 2) * DAY;
  const solo = Math.round(episodes * 0.6);
  const geo = new Geography(seed);
  for (let e = 0; e < solo; e++) {
    const victim = fraudRng.pick(world.cards);
    const ctx: FraudContext = {
      rng: fraudRng,
      world,
      victim,
      t0: atNightSometimes(seed, e, victim, earliest + fraudRng.next() * span),
      deviceId: `dev-${fraudRng.hex(8)}`,
      ring: false,
      out: drafts,
    };
    const typology = fraudRng.weighted(
      ["card_testing", "account_takeover", "stolen_card_spree"] as const,
      [0.3, 0.35, 0.35],
    );
    if (typology === "card_testing") cardTesting(ctx);
    else if (typology === "account_takeover") accountTakeover(ctx);
    else stolenCardSpree(ctx);
  }
  // Rings: one device works through many victims within a day or two.
  for (let remaining = episodes - solo; remaining > 0;) {
    const deviceId = `dev-${fraudRng.hex(8)}`;
    const campaignStart = earliest + fraudRng.next() * span;
    const victims = Math.min(remaining, fraudRng.int(4, 10));
    for (let v = 0; v < victims; v++) {
      const ctx: FraudContext = {
        rng: fraudRng,
        world,
        victim: fraudRng.pick(world.cards),
        t0: campaignStart + fraudRng.next() * 30 * HOUR,
        deviceId,
        ring: true,
        out: drafts,
      };
      if (fraudRng.chance(0.55)) cardTesting(ctx);
      else accountTakeover(ctx);
    }
    remaining -= victims;
  }

  const endMs = startMs + days * DAY;
  const inWindow = drafts.filter((d) => d.timeMs >= startMs && d.timeMs < endMs);
  inWindow.sort((a, b) => a.timeMs - b.timeMs || a.card.id.localeCompare(b.card.id));
  const labelRng = root.fork();
  return inWindow.map((d, i): SimulatedTransaction => {
    const trueFraud = d.typology !== "legit";
    const isFraud = trueFraud ? !labelRng.chance(missed) : labelRng.chance(falseFraud);
    const currency = d.card.home;
    const home = geo.cardHome(d.card);
    const offset = geo.cardUtcOffsetMinutes(d.card);
    const inPerson = d.channel !== Channel.CHANNEL_ECOMMERCE && d.channel !== Channel.CHANNEL_RECURRING;
    // In person, the merchant location is the terminal's: a cardholder shops near home or where
    // they travel; a thief uses the card wherever they are. Online, it is the merchant's seat.
    const merchantLocation =
      inPerson && d.typology === "legit" && home !== null && d.merchant.country === d.card.home
        ? geo.nearHome(home, `${d.card.id}:${d.merchant.id}`)
        : geo.inCountry(d.merchant.country, inPerson && d.typology !== "legit" ? `tx:${i}` : d.merchant.id);
    return {
      tx: {
        transactionId: `tx-${String(i).padStart(8, "0")}`,
        cardId: d.card.id,
        amountMinor: Math.max(1, Math.round(d.amountEur * amountScale * currency.perEur * 100)),
        currency: currency.currency,
        merchantId: d.merchant.id,
        mcc: d.merchant.mcc,
        merchantCountry: d.merchant.country.code,
        cardCountry: d.card.home.code,
        channel: d.channel,
        deviceId: d.deviceId,
        ip: d.ip,
        eventTimeMs: Math.round(d.timeMs),
        bin: d.card.bin,
        merchantLocation,
        ...(home === null ? {} : { cardHomeLocation: home }),
        ...(offset === null ? {} : { cardUtcOffsetMinutes: offset }),
      },
      isFraud,
      typology: d.typology,
      ring: d.ring,
    };
  });
}
