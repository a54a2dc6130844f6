// The rule set a running scorer uses, replaceable without a restart. A promoted rule file is
// checked against the hash it was promoted with, parsed and compiled in full before `current`
// changes; a file with any problem is refused with every line and reason, and the current
// rules stay.
import { sha256Hex, type RulesControlRecord } from "../control/controlRecord.js";
import { parseRuleSet, RuleSetError, type RuleSet } from "./ruleSet.js";

export interface RuleSetSlotEvents {
  switched?(from: RuleSet, to: RuleSet): void;
  refused?(file: string, issues: readonly string[]): void;
}

export class RuleSetSlot {
  #current: RuleSet;
  #currentSha256: string | undefined;

  constructor(
    initial: RuleSet,
    private readonly events: RuleSetSlotEvents = {},
  ) {
    this.#current = initial;
  }

  /** The rules for the next batch: read once per batch and keep them for the whole batch. */
  get current(): RuleSet {
    return this.#current;
  }

  apply(record: RulesControlRecord): "switched" | "unchanged" | "refused" {
    if (record.sha256 === this.#currentSha256) return "unchanged";
    if (sha256Hex(record.text) !== record.sha256) {
      this.events.refused?.(record.file, [
        `${record.file}: the text does not match its sha256 (altered in transit)`,
      ]);
      return "refused";
    }
    let next: RuleSet;
    try {
      next = parseRuleSet(record.text, record.file);
    } catch (err) {
      if (!(err instanceof RuleSetError)) throw err;
      this.events.refused?.(record.file, err.issues);
      return "refused";
    }
    if (next.version !== record.rulesVersion) {
      this.events.refused?.(record.file, [
        `${record.file}: version ${next.version}, the record says ${record.rulesVersion}`,
      ]);
      return "refused";
    }
    const previous = this.#current;
    this.#current = next;
    this.#currentSha256 = record.sha256;
    this.events.switched?.(previous, next);
    return "switched";
  }
}
