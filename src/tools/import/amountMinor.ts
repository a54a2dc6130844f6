// Amounts as written in an export → integer minor units of their currency, by string arithmetic
// (no float rounding: "0.29" must be 29 cents, not 28.999…). A major amount with more decimals
// than its currency has is refused, not rounded.

/** ISO 4217 currencies whose minor unit is not 1/100 (the rest have two decimals). */
const MINOR_DIGITS: Readonly<Record<string, number>> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  CLF: 4,
  UYW: 4,
};

export const minorDigitsOf = (currency: string): number => MINOR_DIGITS[currency] ?? 2;

export function amountMinor(
  text: string,
  currency: string,
  units: "major" | "minor",
  decimalSeparator: "." | ",",
): number | string {
  const value = text.trim();
  if (units === "minor") {
    if (!/^\d+$/.test(value)) return `amount "${text}" is not a whole number of minor units`;
    return Number(value);
  }
  const [whole, fraction = "", extra] = value.split(decimalSeparator);
  if (extra !== undefined || !/^\d+$/.test(whole ?? "") || !/^\d*$/.test(fraction)) {
    return `amount "${text}" is not a decimal number with "${decimalSeparator}" as separator`;
  }
  const digits = minorDigitsOf(currency);
  const significant = fraction.replace(/0+$/, "");
  if (significant.length > digits) return `amount "${text}" has more decimals than ${currency} (${digits})`;
  return Number(whole + significant.padEnd(digits, "0"));
}
