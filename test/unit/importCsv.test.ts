// `import csv`: a labelled CSV export and a mapping become the .pbd + labels files training and
// replay read; rows the mapping cannot turn into a valid transaction are reported by line and
// reason and skipped; a mapping with a mistake is refused with its line.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { Channel } from "../../src/codec/messages.js";
import { CsvMappingError, loadCsvMapping, parseCsvMapping } from "../../src/tools/import/csvMapping.js";
import { importCsv, type RejectedRow } from "../../src/tools/import/importCsv.js";
import { readLabelsFile, readTransactionsFile } from "../../src/codec/transactionFiles.js";

const run = promisify(execFile);

const MAPPING = `
fields:
  transaction_id: tx_id
  card_id: card
  merchant_id: shop
  mcc: cat
  merchant_country: { fixed: fr }
  channel: { column: chan, map: { pos: card_present, web: ecommerce } }
event_time: { column: when, format: "dd/MM/yyyy HH:mm:ss", time_zone: Europe/Paris }
amount: { column: amt, units: major, decimal_separator: "," }
currency: ccy
label: { column: fraud, fraud: ["Y"], legit: ["N"] }
`;

// Line numbers are the file's: the header is line 1, and t5's merchant spans lines 6-7.
const CSV = [
  "tx_id;card;when;amt;ccy;shop;cat;chan;fraud",
  "t1;c1;01/06/2025 10:00:00;0,29;EUR;m1;5411;pos;N",
  "t2;c1;01/06/2025 11:30:00;1000;JPY;m2;5999;web;Y",
  "t3;c2;01/06/2025 12:00:00;12,345;EUR;m1;5411;pos;N",
  "t4;c2;31/06/2025 12:00:00;5;EUR;m1;5411;pos;N",
  '"t5";"c3";"15/01/2025 13:00:00";"7,50";"eur";"m',
  '3";5411;pos;Y',
  "t6;c3;01/06/2025 14:00:00;3;EUR;m1;5411;pigeon;N",
  "t1;c4;01/06/2025 15:00:00;3;EUR;m1;5411;pos;N",
  "t8;c4;01/06/2025 16:00:00;3;EUR;m1;5411;pos",
  "t9;c4;01/06/2025 17:00:00;3;EUR;m1;5411;pos;maybe",
  "t10;c4;01/06/2025 17:00:00;0;EUR;m1;5411;pos;N",
  "t11;c5;01/06/2025 18:00:00;3;EUR;m1;54111;pos;N",
].join("\n");

let dir: string;
const rejects: RejectedRow[] = [];
let summary: Awaited<ReturnType<typeof importCsv>>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "import-csv-"));
  await writeFile(join(dir, "export.csv"), CSV);
  const mapping = parseCsvMapping(`delimiter: ";"\n${MAPPING}`, "mapping.yaml");
  summary = await importCsv({
    csvPath: join(dir, "export.csv"),
    mapping,
    mappingSource: "mapping.yaml",
    outDir: join(dir, "out"),
    onReject: (r) => rejects.push(r),
  });
});

describe("import csv", () => {
  it("writes the mapped rows as delimited Transactions with their labels", async () => {
    const txs = await readTransactionsFile(summary.files.transactions);
    expect(txs.map((t) => t.transactionId)).toEqual(["t1", "t2", "t5"]);
    const [t1, t2, t5] = txs;
    expect(t1).toMatchObject({
      cardId: "c1",
      amountMinor: 29, // "0,29" exactly, no float rounding
      currency: "EUR",
      merchantId: "m1",
      mcc: 5411,
      merchantCountry: "FR",
      channel: Channel.CHANNEL_CARD_PRESENT,
      eventTimeMs: Date.parse("2025-06-01T08:00:00Z"), // 10:00 in Paris in summer
    });
    expect(t2).toMatchObject({ amountMinor: 1000, currency: "JPY", channel: Channel.CHANNEL_ECOMMERCE });
    expect(t5).toMatchObject({
      amountMinor: 750,
      currency: "EUR",
      merchantId: "m\n3",
      eventTimeMs: Date.parse("2025-01-15T12:00:00Z"), // 13:00 in Paris in winter
    });
    const labels = await readLabelsFile(summary.files.labels!);
    expect([...labels]).toEqual([
      ["t1", false],
      ["t2", true],
      ["t5", true],
    ]);
  });

  it("reports every row it skips with the file's line number and the reason", () => {
    expect(rejects.map((r) => [r.line, r.reason])).toEqual([
      [4, 'amount "12,345" has more decimals than EUR (2)'],
      [5, 'event time "31/06/2025 12:00:00" is not a real date and time'],
      [8, `channel: "pigeon" (column chan) is not in the mapping's map`],
      [9, 'transaction_id "t1" repeats an earlier row'],
      [10, "has 8 fields, the header 9"],
      [11, 'label "maybe" (column fraud) is neither a fraud nor a legit value'],
      [12, "amount_minor 0 is not in 1..1000000000000"],
      [13, 'mcc "54111" is not a number 0..9999'],
    ]);
    expect(summary).toMatchObject({ rows: 11, imported: 3, fraud: 2, rejected: 8 });
  });

  it("writes the skipped rows to the rejects file as CSV", async () => {
    const text = await readFile(summary.files.rejects, "utf8");
    expect(text.split("\n")[0]).toBe("line,reason");
    expect(text).toContain('4,"amount ""12,345"" has more decimals than EUR (2)"');
    expect(text.trim().split("\n")).toHaveLength(1 + 8);
  });

  it("refuses a mapping with a mistake, naming the line", () => {
    const bad = MAPPING.replace("units: major", "units: cents");
    const err = (() => {
      try {
        parseCsvMapping(bad, "bad.yaml");
      } catch (e) {
        return e;
      }
    })() as CsvMappingError;
    expect(err).toBeInstanceOf(CsvMappingError);
    const lineOfAmount = bad.split("\n").findIndex((l) => l.startsWith("amount:")) + 1;
    expect(err.problems.join("\n")).toMatch(new RegExp(`bad\\.yaml:${lineOfAmount}:\\d+: amount\\.units`));
  });

  it("refuses a mapping that names a column the file does not have, before writing a row", async () => {
    const mapping = parseCsvMapping(
      `delimiter: ";"\n${MAPPING.replace("column: amt", "column: amount")}`,
      "m.yaml",
    );
    await expect(
      importCsv({
        csvPath: join(dir, "export.csv"),
        mapping,
        mappingSource: "m.yaml",
        outDir: join(dir, "o2"),
      }),
    ).rejects.toThrow(/column\(s\) "amount" not in the header/);
  });

  it("the example mapping of a public data set is valid", async () => {
    const mapping = await loadCsvMapping("examples/import/sparkov-mapping.yaml");
    expect(mapping.event_time.time_zone).toBe("America/New_York");
  });

  it("the command prints the skipped rows by line and a summary, and exits 2 on a bad mapping", async () => {
    await writeFile(join(dir, "mapping.yaml"), `delimiter: ";"\n${MAPPING}`);
    const cli = (...args: string[]) =>
      run(process.execPath, ["bin/fraud-scorer.js", "import", "csv", ...args]).catch(
        (e: { stdout: string; stderr: string; code: number }) => e,
      );
    const ok = await cli(
      "--mapping",
      join(dir, "mapping.yaml"),
      join(dir, "export.csv"),
      "--out",
      join(dir, "o3"),
    );
    expect(ok.stderr).toContain('export.csv:9: skipped: transaction_id "t1" repeats an earlier row');
    expect(ok.stdout).toMatch(/imported 3 of 11 rows \(2 labelled fraud/);
    await writeFile(join(dir, "broken.yaml"), "fields:\n  card_id: [unclosed\n");
    const bad = (await cli("--mapping", join(dir, "broken.yaml"), join(dir, "export.csv"))) as {
      code: number;
      stderr: string;
    };
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/broken\.yaml:\d+:\d+:/);
  });
});
