// `fraud-scorer import csv`: turn a company's labelled CSV export into the files `npm run train`
// and `replay` read. Offline tooling: its code (src/tools/import) loads only when this runs.
import type { Command } from "commander";
import { refuseArguments } from "./cliArguments.js";

const REPORTED_REJECTS = 50;

export function registerImportCommand(program: Command): void {
  const importCommand = program.command("import").description("convert exports into transaction files");
  importCommand
    .command("csv")
    .description(
      "CSV with a header → <name>.pbd (delimited Transactions) + <name>.labels.csv, as a YAML mapping says; " +
        "rows that cannot be mapped are reported with their line number and skipped (all in <name>.rejects.csv)",
    )
    .argument("<file>", "CSV export with a header row")
    .requiredOption(
      "--mapping <file>",
      "YAML mapping: column of each Transaction field, time format, units, label",
    )
    .option("--out <dir>", "folder for the output files", ".")
    .action(async (file: string, o: { mapping: string; out: string }) => {
      const { CsvMappingError, loadCsvMapping } = await import("../tools/import/csvMapping.js");
      const { importCsv } = await import("../tools/import/importCsv.js");
      let reported = 0;
      try {
        const mapping = await loadCsvMapping(o.mapping);
        const summary = await importCsv({
          csvPath: file,
          mapping,
          mappingSource: o.mapping,
          outDir: o.out,
          onReject: (r) => {
            if (reported++ < REPORTED_REJECTS)
              process.stderr.write(`${file}:${r.line}: skipped: ${r.reason}\n`);
          },
        });
        if (reported > REPORTED_REJECTS)
          process.stderr.write(`… ${reported - REPORTED_REJECTS} more in ${summary.files.rejects}\n`);
        const span =
          summary.firstTimeMs === undefined
            ? ""
            : `, ${new Date(summary.firstTimeMs).toISOString()} … ${new Date(summary.lastTimeMs!).toISOString()}`;
        console.log(
          [
            `imported ${summary.imported} of ${summary.rows} rows (${summary.fraud} labelled fraud${span})`,
            `  transactions → ${summary.files.transactions}`,
            ...(summary.files.labels ? [`  labels       → ${summary.files.labels}`] : []),
            `  skipped ${summary.rejected} → ${summary.files.rejects}`,
            ...summary.rejectedByReason.map(([reason, n]) => `    ${String(n).padStart(7)}  ${reason}`),
          ].join("\n"),
        );
        if (summary.imported === 0) process.exitCode = 1;
      } catch (err) {
        if (err instanceof CsvMappingError) refuseArguments("import csv", err.problems);
        if ((err as NodeJS.ErrnoException).code === "ENOENT")
          refuseArguments("import csv", [(err as Error).message]);
        throw err;
      }
    });
}
