// bench/results/<date>.md and its SVG charts, from the results JSON. The summary table at the
// top is the one the README's Performance section carries. Each section's rows and chapter come
// from its renderer in ./sections/; a new bench section adds one there and one line below.
import {
  SECTION_NAMES,
  isError,
  type BenchResults,
  type SectionError,
  type SectionName,
} from "./benchResults.js";
import { failed, table } from "./reportFormat.js";
import type { EmbedChart, SectionRenderer } from "./sectionRenderer.js";
import { batchingReport } from "./sections/batching.js";
import { ceilingReport } from "./sections/ceiling.js";
import { coldStartReport } from "./sections/coldStart.js";
import { decodeReport } from "./sections/decode.js";
import { endToEndReport } from "./sections/endToEnd.js";
import { hotPathReport, noisyNeighbourReport } from "./sections/hotPath.js";
import { kafkaClientsReport } from "./sections/kafkaClients.js";
import { loadGeneratorReport } from "./sections/loadGenerator.js";
import { modelReport } from "./sections/model.js";
import { promoteReport } from "./sections/promote.js";
import { stateReport } from "./sections/state.js";

export interface RenderedReport {
  readonly markdown: string;
  /** File name (relative to the markdown) → SVG. */
  readonly charts: ReadonlyMap<string, string>;
}

type SectionResult<Name extends SectionName> = Exclude<BenchResults[Name], SectionError>;

const RENDERERS: { readonly [Name in SectionName]: SectionRenderer<SectionResult<Name>> } = {
  endToEnd: endToEndReport,
  decode: decodeReport,
  batching: batchingReport,
  state: stateReport,
  model: modelReport,
  ceiling: ceilingReport,
  coldStart: coldStartReport,
  hotPath: hotPathReport,
  noisyNeighbour: noisyNeighbourReport,
  kafkaClients: kafkaClientsReport,
  loadGenerator: loadGeneratorReport,
  promote: promoteReport,
};

/** The renderer and result of each section, in report order (SECTION_NAMES); a section that
 * was not run (`--only`, or results written before it existed) is left out. */
const sections = (r: BenchResults) =>
  SECTION_NAMES.filter((name) => r[name] !== undefined).map((name) => ({
    renderer: RENDERERS[name] as SectionRenderer<unknown>,
    result: r[name] as unknown,
  }));

/** One row per comparison: what was compared, on what terms, and the ratio. */
export function summaryTable(r: BenchResults): string {
  const rows = sections(r).flatMap(({ renderer, result }) =>
    isError(result) ? [] : renderer.summaryRows(result),
  );
  return table(["Comparison", "Measured", "Ratio / verdict"], rows, { leftColumns: 3 });
}

export function renderReport(r: BenchResults, chartPrefix: string): RenderedReport {
  const charts = new Map<string, string>();
  const chart: EmbedChart = (name, svg) => {
    const file = `${chartPrefix}-${name}.svg`;
    charts.set(file, svg);
    return `![${name}](${file})`;
  };
  const { meta } = r;
  const out: string[] = [
    `# fraud-scorer benchmarks, ${meta.date}${meta.smoke ? " (smoke run: numbers not meaningful)" : ""}`,
    "",
    `\`${meta.command}\` · ${meta.durationS.toFixed(0)} s · commit ${meta.commit} · ${meta.machine.cpus} × ${meta.machine.cpuModel}, ` +
      `${meta.machine.memoryGiB} GiB · Node ${meta.machine.node}${meta.machine.v8Flags?.length ? ` (${meta.machine.v8Flags.join(" ")})` : ""} · Kafka ${meta.stack.kafkaVersion ?? `version not recorded (${meta.stack.kafkaBrokers} was not started from this checkout)`} · load average ` +
      `${meta.machine.loadAverageAtStart.toFixed(1)} at start, ${meta.machine.loadAverageAtEnd.toFixed(1)} at end`,
    "",
    "Every comparison runs both sides in the same run, on the same machine, interleaved where it can be; " +
      "read the ratios, not the absolute times, which drift with whatever else the machine is doing.",
    "",
    "## Summary",
    "",
    summaryTable(r),
    "",
  ];
  for (const { renderer, result } of sections(r)) {
    out.push(`## ${renderer.heading}`, "");
    if (isError(result)) out.push(failed(result), "");
    else out.push(...renderer.chapter(result, chart));
  }
  return { markdown: out.join("\n"), charts };
}
