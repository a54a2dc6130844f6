// `npm run features:signal`: which features carry the signal in a labelled history, one at a
// time — each feature's ROC-AUC as a score on its own (0.5 = none; below 0.5, the signal is
// in the other direction, so |AUC − 0.5| is its strength). Univariate, so it shows where the
// signal is, not what a feature adds beside the others (the --feature-schema ablation does that).
import { Command } from "commander";
import { FEATURE_NAMES } from "../src/features/featureVector.js";
import { DEFAULT_RULES_PATH, loadRuleSet } from "../src/rules/ruleSet.js";
import { loadLabelledDataset } from "./dataset/labelledDataset.js";
import { rocAuc } from "./evaluate/metrics.js";
import { buildCardSequences } from "./train/cardSequences.js";

const program = new Command()
  .name("features:signal")
  .description("Univariate ROC-AUC of every feature on a labelled history")
  .requiredOption("--transactions <file>", "delimited Transaction file (.pbd)")
  .requiredOption("--labels <file>", "CSV with header transaction_id,is_fraud")
  .action(async (o: { transactions: string; labels: string }) => {
    const data = await loadLabelledDataset({
      transactions: o.transactions,
      labels: o.labels,
      validationFraction: 0,
      testFraction: 0,
    });
    const seqs = buildCardSequences(data, await loadRuleSet(DEFAULT_RULES_PATH));
    const F = seqs.featureCount;
    const rows = seqs.labels.length;
    const column = new Float32Array(rows);
    const results = FEATURE_NAMES.map((name, f) => {
      for (let r = 0; r < rows; r++) column[r] = seqs.features[r * F + f]!;
      const auc = rocAuc(column, seqs.labels);
      return { name, auc, strength: Math.abs(auc - 0.5) };
    }).sort((a, b) => b.strength - a.strength);
    console.log(`${rows} transactions, ${seqs.labels.reduce((a, b) => a + b, 0)} labelled fraud\n`);
    console.log("| feature | ROC-AUC alone | strength |\n| --- | --- | --- |");
    for (const r of results)
      console.log(`| \`${r.name}\` | ${r.auc.toFixed(3)} | ${r.strength.toFixed(3)} |`);
  });

await program.parseAsync(process.argv);
