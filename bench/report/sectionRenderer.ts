// What each bench section contributes to the report: its rows in the summary table and its own
// chapter. One renderer per section, beside the others in bench/report/sections/; markdown.ts
// only assembles them.

/** Embeds an SVG chart in the report under `name` and returns the Markdown that shows it. */
export type EmbedChart = (name: string, svg: string) => string;

export interface SectionRenderer<Result> {
  /** Chapter heading without the "## " (e.g. "1. End to end"). */
  readonly heading: string;
  /** Rows of the summary table: comparison, measured, ratio / verdict. */
  summaryRows(result: Result): string[][];
  /** The chapter's lines after its heading (the caller adds the heading and handles errors). */
  chapter(result: Result, chart: EmbedChart): string[];
}
