// Node's start-up flags for the commands that score a stream, which V8 reads when the process
// starts and which therefore cannot be set from inside it (src/ops/v8Flags.ts sets what can).
// bin/fraud-scorer.js starts those commands again with them; the bench starts itself with them,
// so that its in-process sections measure what `serve` runs.
//
// Young-generation semi-spaces of up to 64 MB (V8's default: 16). A batch's objects (decoded
// transactions, card states, feature arrays) live until its decisions are out, so every
// young-generation collection copied those of the batches in hand, and with 16 MB one came every
// ~1,300 transactions of a drain. Measured on 2026-12-05 (AMD EPYC, 2 vCPUs) against runs with
// NODE_OPTIONS=--max-semi-space-size=16, alternating:
//   - end to end at 10,000 tx/s (bench section 1's step, 20 s, five pairs): p99 62-141 ms
//     (median 70) against 83-386 (median 162), lower in every pair, as was serve's CPU per
//     transaction (47.5-58.7 µs against 51.1-65.8); the model decided >= 99 % in four runs of
//     five against three;
//   - section 8's in-process drain, seven rounds: median 26.0 µs of CPU per transaction against
//     28.6, a quarter of the collections, the main thread paused 3.9-5.6 % of the wall time
//     against 7.4-9.2 %;
//   - serve draining section 6's backlog: no difference this machine could show (ten drains,
//     medians 44.5 and 41.7 µs per record, each side spread over 36-51).
// What it costs: ~90 MB more resident under load (section 8's drain: 585 MB against 495), and
// one more Node start-up (~70 ms) where the bin starts the command again. The young generation
// grows to the limit only under allocation pressure.

const SCORING_COMMANDS = new Set(["serve", "replay", "shadow"]);
const YOUNG_GENERATION_FLAG = "--max-semi-space-size=64";

/** The young-generation sizes given to this process, on Node's command line or in NODE_OPTIONS. */
export function givenYoungGenerationFlags(execArgv, nodeOptions = "") {
  return [...execArgv, ...nodeOptions.split(/\s+/)].filter((arg) => arg.startsWith("--max-semi-space-size"));
}

/**
 * The flags `command` should run with that the process lacks: none for a command that does not
 * score, and none where a size was given, which wins.
 */
export function scoringNodeFlags(command, execArgv, nodeOptions = "") {
  if (!SCORING_COMMANDS.has(command)) return [];
  if (givenYoungGenerationFlags(execArgv, nodeOptions).length > 0) return [];
  return [YOUNG_GENERATION_FLAG];
}

/**
 * Replaces this process (execve: the same pid, signals and stdio) with the same command line plus
 * the flags `command` lacks; returns, having done nothing, when it lacks none. The bin and the
 * bench (which stands for `serve`) both start again this way.
 */
export function restartWithScoringFlags(command) {
  const flags = scoringNodeFlags(command, process.execArgv, process.env.NODE_OPTIONS);
  if (flags.length === 0) return;
  process.execve(process.execPath, [
    process.execPath,
    ...flags,
    ...process.execArgv,
    ...process.argv.slice(1),
  ]);
}
