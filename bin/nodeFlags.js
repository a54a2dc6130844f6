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
//
// The collector on the main thread alone (--single-threaded-gc): no parallel young-generation
// collections, no concurrent marking or sweeping on V8's helper threads. On two cores shared with
// Redis and the broker, the helpers did not run beside the main thread but in its place: in serve's
// drains of section 6 they spent 7.8-9.0 µs per record besides the main thread's 19-23, and the
// main thread waited for a core 15 % of each drain against 4 % without them. Measured on
// 2026-12-07 (AMD EPYC, 2 vCPUs), alternating with the helpers in one run:
//   - serve draining section 6's backlog, three runs of four rounds: 28.8 / 25.6 / 26.2 µs of CPU
//     per record against 31.0 / 29.5 / 26.6, less in 9 of 12 rounds, at 1.00 / 0.97 / 0.97 the
//     records/s;
//   - `npm run bench -- --only endToEnd,hotPath`, two pairs of runs: highest rate with p99 <=
//     200 ms and the model >= 99 % 16,000 and 20,000 tx/s against 11,000 and 18,000; p99 at
//     1,000 / 5,000 / 10,000 tx/s 35 / 43 / 73 and 34 / 41 / 60 ms against 39 / 69 / 78 and
//     40 / 55 / 78; section 8's in-process drain and steady 1,000 tx/s no different beyond
//     the noise (21.3 and 22.0 µs per transaction against 21.9 and 26.0; 13.5 and 10.5 % of a
//     core less the arrival timer against 13.7 and 9.0).
// Pauses are longer where a machine has cores to spare for the helpers; a flag given on Node's
// command line (--no-single-threaded-gc, or any of V8's collector-thread flags) wins.
//
// An old generation of at least 512 MB before V8 starts a whole-heap collection
// (--initial-old-space-size=512; V8's default: none, and the limit after each collection is about
// 1.1 x what survived it plus the young generation). V8 starts marking as soon as the room left
// under that limit is less than its young generation could promote in one go, and with 64 MB
// semi-spaces that was so right after every whole-heap collection: at a steady 1,000 tx/s, with
// ~73 MB live, bench section 8 showed a whole-heap collection every 2.3 s, each started at once
// by a task ("Start (task): 73MB / 145MB") and costing ~80-300 ms of marking, a fifth to a third of
// the scorer's CPU at that rate (V8's --trace-gc and --trace-incremental-marking). With this
// floor: 2 whole-heap collections in the 150 s of steady runs instead of ~60. Measured on
// 2026-12-07 (AMD EPYC, 2 vCPUs), bench section 8, four runs each alternating without and with
// it: steady 1,000 tx/s, the scorer's share of a core less the arrival timer 13.6-14.8 % against
// 9.8-11.7 %, beside the CPU hog 10.1-11.9 % against 8.7-9.9 %, lower in every pair; the main
// thread busy in 10.1-12.2 % of the profiled run's samples against 5.9-6.5 %; serve draining
// section 6's backlog no different (25.2 against 24.8 µs per record). What it costs: garbage
// that reaches the old generation stays until it holds 512 MB (V8 caps the floor at half the
// heap's limit, so a smaller heap given with --max-old-space-size lowers it). A size given on
// Node's command line (--initial-old-space-size or --initial-heap-size) wins; Node refuses both
// in NODE_OPTIONS.
//
// One thread in V8's worker pool (--v8-pool-size=1; Node's default: 4), where V8 compiles
// optimized code in the background (the collector no longer uses it: --single-threaded-gc). About
// 6 s into a load of 500 tx/s, V8's optimizing compiler takes the per-transaction path in one
// wave (70 functions compiled in one second, jobs of up to 121 ms; --trace-opt): with four
// compiling threads that wave took serve's main thread off the two cores it shares with the
// broker and Redis (five event-loop turns of 16-27 ms in a row), and `npm run demo`'s p99 in that
// second was 73-97 ms in eight of eleven runs (220 ms, with 9 rules decisions, in one more)
// against 32-35 ms in a run's median second. Measured on 2026-12-07 (AMD EPYC, 2 vCPUs):
//   - `npm run demo`, three pairs alternating with NODE_OPTIONS=--v8-pool-size=4 (serve alone
//     differing): that second 73 / 60 / 35 ms against 82 / 79 / 113, the whole run's p99
//     46 / 40 / 35 against 54 / 44 / 52, its max 83 / 76 / 61 against 90 / 83 / 126; with the
//     demo's own process on one thread too, that second 35-41 ms in four runs of four;
//   - serve draining section 6's backlog, two rounds each: 55.5 / 52.8 µs of CPU per record
//     against 52.3 / 52.3, at 18.4k / 20.0k records/s against 18.5k / 18.6k: no difference this
//     machine could show.
// What it costs: the hot path reaches optimized code later during such a wave, on any machine;
// where the scorer has cores to itself, give --v8-pool-size=4. A pool size given on Node's
// command line or in NODE_OPTIONS wins.

const SCORING_COMMANDS = new Set(["serve", "replay", "shadow"]);

/** V8's flags that say how many threads collect. */
const COLLECTOR_THREADS =
  /^--(no-)?(single[-_]threaded[-_]gc|parallel[-_](scavenge|marking|compaction|pointer[-_]update)|concurrent[-_](marking|sweeping))$/;

/**
 * The flags the scoring commands run with, each with what counts as given instead (on Node's
 * command line or in NODE_OPTIONS), which wins: any young-generation size; any of V8's flags
 * that say how many threads collect; any initial old-generation or heap size; any worker-pool
 * size.
 */
const SCORING_FLAGS = [
  { flag: "--max-semi-space-size=64", given: (arg) => arg.startsWith("--max-semi-space-size") },
  { flag: "--single-threaded-gc", given: (arg) => COLLECTOR_THREADS.test(arg) },
  {
    flag: "--initial-old-space-size=512",
    given: (arg) => /^--initial[-_](old[-_]space|heap)[-_]size/.test(arg),
  },
  { flag: "--v8-pool-size=1", given: (arg) => arg.startsWith("--v8-pool-size") },
];

const argsOf = (execArgv, nodeOptions) => [...execArgv, ...nodeOptions.split(/\s+/)];

/** The flags of the kinds above given to this process, on Node's command line or in NODE_OPTIONS. */
export function givenScoringFlags(execArgv, nodeOptions = "") {
  return argsOf(execArgv, nodeOptions).filter((arg) => SCORING_FLAGS.some(({ given }) => given(arg)));
}

/**
 * The flags `command` should run with that the process lacks: none for a command that does not
 * score; of each kind, none where one was given.
 */
export function scoringNodeFlags(command, execArgv, nodeOptions = "") {
  if (!SCORING_COMMANDS.has(command)) return [];
  const args = argsOf(execArgv, nodeOptions);
  return SCORING_FLAGS.filter(({ given }) => !args.some(given)).map(({ flag }) => flag);
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
