// How every command declares its options and reads them: each option described once, as a row
// (flag, environment variable, fallback, help). commander gets its options from the rows, with
// no commander defaults, so an absent flag never hides the environment variable; the values a
// command's zod schema then validates are each row's flag, else its environment variable, else
// its fallback, a blank value counting as not given.
import type { Command } from "commander";

export interface CommandOption<Key extends string = string> {
  /** Name of the value; the flag's commander attribute when absent. */
  readonly key?: Key;
  /** Long flag name without dashes; "no-…" for a switch that turns something off. */
  readonly flag: string;
  /** Placeholder of the flag's value; absent for on/off switches. */
  readonly flagValue?: string;
  readonly env?: string;
  /** Used as if given when neither the flag nor the environment variable is. */
  readonly fallback?: string;
  readonly help: string;
}

/** commander's attribute name for a flag: kafka-brokers → kafkaBrokers, no-timings → timings. */
export const flagAttribute = (flag: string) =>
  flag.replace(/^no-/, "").replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

const keyOf = (o: CommandOption) => o.key ?? flagAttribute(o.flag);

/** `(default: …)` for a fallback shown in help; the config file's defaults are shown this way too. */
export function addCommandOptions(
  command: Command,
  options: readonly CommandOption[],
  shownDefault: (o: CommandOption) => string | undefined = (o) => o.fallback,
): Command {
  for (const o of options) {
    const value = o.flagValue === undefined ? "" : ` <${o.flagValue}>`;
    const fallback = shownDefault(o);
    const shown = fallback === undefined ? "" : ` (default: ${fallback})`;
    const env = o.env === undefined ? "" : ` [env ${o.env}]`;
    command.option(`--${o.flag}${value}`, `${o.help}${shown}${env}`);
  }
  return command;
}

const blankIsAbsent = (raw: unknown) => (typeof raw === "string" ? raw.trim() || undefined : raw);

/** Flag, else environment variable, else fallback, by key; options with none are left out. */
export function commandOptionValues(
  options: readonly CommandOption[],
  flags: Readonly<Record<string, unknown>>,
  env: Readonly<Record<string, string | undefined>>,
): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const o of options) {
    const value =
      blankIsAbsent(flags[flagAttribute(o.flag)]) ??
      (o.env === undefined ? undefined : blankIsAbsent(env[o.env])) ??
      o.fallback;
    if (value !== undefined) values[keyOf(o)] = value;
  }
  return values;
}

/** A command's options, or every problem with them (the command prints them and exits 2). */
export type ParsedOptions<Options> =
  | { readonly ok: true; readonly options: Options }
  | { readonly ok: false; readonly problems: readonly string[] };
