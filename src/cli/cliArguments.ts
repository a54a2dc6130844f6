// Small argument parsers shared by the commands: durations, rates, counts. Each returns the
// value or a message saying what was expected, for the command to print and exit on.

const UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "30s", "2m", "1500ms", "1h", or a bare number of seconds. */
export function parseDuration(text: string): number | string {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(text);
  if (!m) return `"${text}" is not a duration (e.g. 30s, 2m, 1500ms)`;
  const ms = Number(m[1]) * UNITS_MS[m[2] ?? "s"]!;
  return ms > 0 ? ms : `the duration must be above zero, got "${text}"`;
}

export function parsePositiveNumber(text: string, what: string): number | string {
  const n = Number(text);
  return Number.isFinite(n) && n > 0 && text.trim() !== ""
    ? n
    : `${what} must be a positive number, got "${text}"`;
}

export function parsePositiveInteger(text: string, what: string): number | string {
  return /^\s*\d+\s*$/.test(text) && Number(text) > 0
    ? Number(text)
    : `${what} must be a positive integer, got "${text}"`;
}

export const brokerList = (text: string | undefined): string[] | undefined => {
  const list = text
    ?.split(",")
    .map((b) => b.trim())
    .filter((b) => b !== "");
  return list && list.length > 0 ? list : undefined;
};

/** Prints the problems and exits 2: the shared ending of a refused command line. */
export function refuseArguments(command: string, problems: readonly string[]): never {
  process.stderr.write(
    `fraud-scorer ${command}: ${problems.length === 1 ? problems[0] : "the arguments have problems:"}\n`,
  );
  if (problems.length > 1) for (const p of problems) process.stderr.write(`  - ${p}\n`);
  process.stderr.write(`see fraud-scorer ${command} --help\n`);
  process.exit(2);
}
