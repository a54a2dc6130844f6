// Event times as a CSV export writes them → Unix epoch milliseconds. A value that does not fit
// the declared format exactly is an error with a reason, never a best guess (Date.parse would
// accept "03/04/2025" and pick a month order for you).
export type TimeParser = (text: string) => number | string;

const ISO_8601 = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;
const FIXED_OFFSET = /^([+-])(\d{2}):?(\d{2})$/;
const TOKENS = ["yyyy", "SSS", "MM", "dd", "HH", "mm", "ss"] as const;
type Token = (typeof TOKENS)[number];

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Milliseconds to add to a wall-clock time read as UTC to get the instant, in `zone`. */
function zoneOffsetMs(zone: string): (wallClockAsUtc: number) => number {
  if (zone === "UTC" || zone === "Z") return () => 0;
  const fixed = FIXED_OFFSET.exec(zone);
  if (fixed) {
    const ms = (Number(fixed[2]) * 60 + Number(fixed[3])) * 60_000;
    return () => (fixed[1] === "+" ? -ms : ms);
  }
  const offsetAt = instantOffsetMs(zone);
  // Two passes settle the offset around a DST change (the wall time's own offset).
  return (wall) => {
    const first = offsetAt(wall);
    return -offsetAt(wall - first);
  };
}

/** Wall clock in `zone` minus UTC at an instant, in ms (one Intl formatter per zone). */
function instantOffsetMs(zone: string): (instant: number) => number {
  const format = new Intl.DateTimeFormat("en-US", {
    timeZone: zone, // throws RangeError for an unknown zone: caught where the mapping is checked
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
  });
  const offsetAt = (instant: number) => {
    const p = Object.fromEntries(format.formatToParts(instant).map((x) => [x.type, x.value]));
    const wall = Date.UTC(+p.year!, +p.month! - 1, +p.day!, +p.hour!, +p.minute!, +p.second!);
    return wall - (instant - (instant % 1000));
  };
  return offsetAt;
}

/**
 * The UTC offset (minutes) a zone (IANA name, UTC or ±HH:MM) has at an instant: what the card's
 * local clock reads minus UTC, daylight saving time included. Throws RangeError for an unknown zone.
 */
export function utcOffsetMinutesAt(zone: string): (instant: number) => number {
  if (zone === "UTC" || zone === "Z") return () => 0;
  const fixed = FIXED_OFFSET.exec(zone);
  if (fixed) {
    const minutes = (fixed[1] === "+" ? 1 : -1) * (Number(fixed[2]) * 60 + Number(fixed[3]));
    return () => minutes;
  }
  const offsetAt = instantOffsetMs(zone);
  return (instant) => Math.round(offsetAt(instant) / 60_000);
}

export function isKnownTimeZone(zone: string): boolean {
  try {
    zoneOffsetMs(zone);
    return true;
  } catch {
    return false;
  }
}

function patternParser(pattern: string, zone: string): TimeParser {
  const order: Token[] = [];
  let source = "";
  for (let i = 0; i < pattern.length;) {
    const token = TOKENS.find((t) => pattern.startsWith(t, i));
    if (token) {
      order.push(token);
      source += token === "yyyy" ? "(\\d{4})" : token === "SSS" ? "(\\d{3})" : "(\\d{2})";
      i += token.length;
    } else {
      source += escapeRegExp(pattern[i]!);
      i++;
    }
  }
  const regex = new RegExp(`^${source}$`);
  const offset = zoneOffsetMs(zone);
  return (text) => {
    const m = regex.exec(text);
    if (!m) return `"${text}" does not match the pattern "${pattern}"`;
    const v: Partial<Record<Token, number>> = {};
    order.forEach((t, i) => (v[t] = Number(m[i + 1])));
    const [month, day, hour, minute, second] = [v.MM!, v.dd!, v.HH ?? 0, v.mm ?? 0, v.ss ?? 0];
    const wall = Date.UTC(v.yyyy!, month - 1, day, hour, minute, second, v.SSS ?? 0);
    const back = new Date(wall);
    if (
      back.getUTCMonth() !== month - 1 ||
      back.getUTCDate() !== day ||
      hour > 23 ||
      minute > 59 ||
      second > 59
    )
      return `"${text}" is not a real date and time`;
    return wall + offset(wall);
  };
}

function epochParser(unitMs: number, name: string): TimeParser {
  return (text) => {
    if (!/^-?\d+(\.\d+)?$/.test(text)) return `"${text}" is not a number of ${name}`;
    return Math.round(Number(text) * unitMs);
  };
}

const isoParser: TimeParser = (text) => {
  if (!ISO_8601.test(text)) return `"${text}" is not ISO-8601 with a time zone (e.g. 2025-06-01T12:00:00Z)`;
  const ms = Date.parse(text.replace(" ", "T"));
  return Number.isNaN(ms) ? `"${text}" is not a real date and time` : ms;
};

export function timeParser(format: string, zone: string): TimeParser {
  if (format === "iso8601") return isoParser;
  if (format === "epoch_s") return epochParser(1000, "seconds");
  if (format === "epoch_ms") return epochParser(1, "milliseconds");
  return patternParser(format, zone);
}
