// No secret and no raw card id in any log line: checked over every log a scenario's scorers
// wrote. Secrets are the values the suite itself handed them (HMAC key, passwords); card ids are
// every card id the scenario sent.
import { readFileSync } from "node:fs";

export interface LogAudit {
  readonly files: number;
  readonly lines: number;
  readonly secretLeaks: number;
  readonly cardIdLeaks: number;
  /** Lines with the offending value masked, for the report. */
  readonly examples: readonly string[];
}

const CARD_ID_LIKE = /card-[0-9A-Za-z_-]+/g;

export function auditLogs(
  files: readonly string[],
  secrets: readonly string[],
  cardIds: ReadonlySet<string>,
): LogAudit {
  let lines = 0;
  let secretLeaks = 0;
  let cardIdLeaks = 0;
  const examples: string[] = [];
  const nonEmptySecrets = secrets.filter((s) => s.length >= 6);
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n")) {
      if (line === "") continue;
      lines++;
      const secret = nonEmptySecrets.find((s) => line.includes(s));
      if (secret !== undefined) {
        secretLeaks++;
        if (examples.length < 5)
          examples.push(`secret in ${file}: ${line.replaceAll(secret, "<SECRET>").slice(0, 300)}`);
      }
      const leakedCard = (line.match(CARD_ID_LIKE) ?? []).find((id) => cardIds.has(id));
      if (leakedCard !== undefined) {
        cardIdLeaks++;
        if (examples.length < 5)
          examples.push(`card id in ${file}: ${line.replaceAll(leakedCard, "<CARD>").slice(0, 300)}`);
      }
    }
  }
  return { files: files.length, lines, secretLeaks, cardIdLeaks, examples };
}
