// `fraud-scorer import csv`: a company's CSV export → the files training and replay read: a
// delimited Transaction stream (.pbd) and a labels CSV (transaction_id,is_fraud). Streams both
// ways, so the export's size is bounded by disk, not memory. Rows the mapping cannot turn into a
// valid transaction are skipped and reported with their line number and reason (all of them in
// <name>.rejects.csv); a duplicate transaction_id is a reject too, since training and replay key
// by it.
import { once } from "node:events";
import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import { basename, extname, join } from "node:path";
import { parse, type CsvError } from "csv-parse";
import { Transaction } from "../../codec/messages.js";
import { CsvMappingError, type CsvMapping } from "./csvMapping.js";
import { compileRowMapper } from "./mapCsvRow.js";

export interface RejectedRow {
  readonly line: number;
  readonly reason: string;
}

export interface ImportSummary {
  readonly rows: number;
  readonly imported: number;
  readonly fraud: number;
  readonly rejected: number;
  /** Reasons with the number of rows each, most frequent first (the value parts elided). */
  readonly rejectedByReason: ReadonlyArray<readonly [string, number]>;
  readonly files: { readonly transactions: string; readonly labels?: string; readonly rejects: string };
  readonly firstTimeMs?: number;
  readonly lastTimeMs?: number;
}

export interface ImportCsvOptions {
  readonly csvPath: string;
  readonly mapping: CsvMapping;
  readonly mappingSource: string;
  readonly outDir: string;
  /** Called for each rejected row as it is found (in file order). */
  readonly onReject?: (row: RejectedRow) => void;
}

/** "amount \"x\" is not …" → "amount … is not …": groups reasons that differ only in the value. */
const reasonKind = (reason: string) => reason.replace(/"[^"]*"/g, "…");

const csvLine = (cells: readonly (string | number)[]) =>
  cells
    .map((c) => (typeof c === "number" || !/[",\n\r]/.test(c) ? c : `"${c.replace(/"/g, '""')}"`))
    .join(",") + "\n";

async function write(stream: WriteStream, chunk: string | Uint8Array): Promise<void> {
  if (!stream.write(chunk)) await once(stream, "drain");
}

async function close(stream: WriteStream): Promise<void> {
  stream.end();
  await once(stream, "finish");
}

export async function importCsv(options: ImportCsvOptions): Promise<ImportSummary> {
  const { csvPath, mapping, mappingSource, outDir, onReject } = options;
  await mkdir(outDir, { recursive: true });
  const name = basename(csvPath, extname(csvPath));
  const files = {
    transactions: join(outDir, `${name}.pbd`),
    labels: mapping.label ? join(outDir, `${name}.labels.csv`) : undefined,
    rejects: join(outDir, `${name}.rejects.csv`),
  };
  const txOut = createWriteStream(files.transactions);
  const labelsOut = files.labels === undefined ? undefined : createWriteStream(files.labels);
  const rejectsOut = createWriteStream(files.rejects);
  await write(rejectsOut, "line,reason\n");
  if (labelsOut) await write(labelsOut, "transaction_id,is_fraud\n");

  const byReason = new Map<string, number>();
  let unreadable = 0;
  const pendingRejects: RejectedRow[] = [];
  const reject = (row: RejectedRow) => {
    pendingRejects.push(row);
    byReason.set(reasonKind(row.reason), (byReason.get(reasonKind(row.reason)) ?? 0) + 1);
  };
  const flushRejects = async () => {
    pendingRejects.sort((a, b) => a.line - b.line);
    for (const r of pendingRejects.splice(0)) {
      onReject?.(r);
      await write(rejectsOut, csvLine([r.line, r.reason]));
    }
  };

  const parser = createReadStream(csvPath).pipe(
    parse({
      delimiter: mapping.delimiter,
      bom: true,
      info: true,
      relax_column_count: true,
      skip_empty_lines: true,
      // A malformed record (an unclosed quote, a stray quote) is a reject, not the end of the import.
      skip_records_with_error: true,
      on_skip: (err: CsvError | undefined) => {
        unreadable++;
        reject({ line: Number(err?.lines ?? 0), reason: `not CSV: ${err?.message ?? "unreadable record"}` });
      },
    }),
  );

  let mapRow: ReturnType<typeof compileRowMapper> | undefined;
  const seen = new Set<string>();
  let rows = 0;
  let imported = 0;
  let fraud = 0;
  let firstTimeMs = Infinity;
  let lastTimeMs = -Infinity;
  try {
    for await (const { record, info } of parser as AsyncIterable<{
      record: string[];
      info: { lines: number };
    }>) {
      // A quoted field may span lines: report the line the record starts on.
      const newlines = record.reduce((n, cell) => n + (cell.match(/\n/g)?.length ?? 0), 0);
      const line = info.lines - newlines;
      if (mapRow === undefined) {
        mapRow = compileRowMapper(mapping, record, mappingSource);
        continue;
      }
      rows++;
      const mapped = mapRow(record);
      if (!mapped.ok) reject({ line, reason: mapped.reason });
      else if (seen.has(mapped.transaction.transactionId))
        reject({
          line,
          reason: `transaction_id "${mapped.transaction.transactionId}" repeats an earlier row`,
        });
      else {
        const tx = mapped.transaction;
        seen.add(tx.transactionId);
        imported++;
        if (mapped.isFraud) fraud++;
        firstTimeMs = Math.min(firstTimeMs, Number(tx.eventTimeMs));
        lastTimeMs = Math.max(lastTimeMs, Number(tx.eventTimeMs));
        await write(txOut, Transaction.encodeDelimited(tx).finish());
        if (labelsOut) await write(labelsOut, csvLine([tx.transactionId, mapped.isFraud ? 1 : 0]));
      }
      if (pendingRejects.length >= 1000) await flushRejects();
    }
    await flushRejects();
    if (mapRow === undefined) throw new CsvMappingError(mappingSource, [`${csvPath} has no header row`]);
  } finally {
    await Promise.all([close(txOut), close(rejectsOut), ...(labelsOut ? [close(labelsOut)] : [])]);
  }
  const rejected = [...byReason.values()].reduce((a, b) => a + b, 0);
  return {
    rows: rows + unreadable,
    imported,
    fraud,
    rejected,
    rejectedByReason: [...byReason].sort((a, b) => b[1] - a[1]),
    files,
    ...(imported > 0 ? { firstTimeMs, lastTimeMs } : {}),
  };
}
