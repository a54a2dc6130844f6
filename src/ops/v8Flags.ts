// The V8 settings every fraud-scorer command runs with, set from inside the process: Node refuses
// them in NODE_OPTIONS, and a flag on the command line would have to be repeated wherever the
// command is started (the bin script, the container's CMD, a user's own unit file).
//
// --no-allocation-site-pretenuring: V8 watches each allocation site, and one whose objects often
// survive two young-generation collections gets its objects allocated straight into the old
// generation from then on. A scorer's objects live as long as their batch (a few ms to tens of
// ms; in a backlog, until the deferred state lane applies them), long enough to be marked so,
// and then die: pretenured, they fill the old generation, which only the whole-heap collector
// (incremental marking on the main thread, concurrent marking and sweeping on the helper
// threads) frees. V8's sampling heap profiler, counting objects that survived young-generation
// collections in bench section 8's drain, put about 28 of 48 MB in 1.5 s on the batch's ingested
// transactions (decoded messages, their strings, feature hashes). With pretenuring off they die
// young: the drain's main-thread GC pauses fell from 12.4–13.6 % of its wall time to 8.9–11 %
// (four alternating rounds), and `serve` drained bench section 6's backlog faster in each of
// seven alternating pairs (+3 to +16 %, median +6 %; 2026-12-03).
//
// Set before a command's modules load: a setting V8 reads as it collects, which takes effect
// for what is allocated after it (the rounds above set it this way and on the command line, with
// the same effect).
import { setFlagsFromString } from "node:v8";

export const V8_FLAGS: readonly string[] = ["--no-allocation-site-pretenuring"];

export function applyV8Flags(): void {
  for (const flag of V8_FLAGS) setFlagsFromString(flag);
}
