// A failing integration test's error carries the scorer's last log lines, the first thing anyone
// needs when such a test fails; the scorer is stopped (SIGTERM) and the rest cleaned up either way.
import type { ScorerChild } from "../../../src/tools/scorerChild.js";

/** `scorer` is read when needed: a test may start a new one midway (after a SIGKILL). */
export async function whileScorerRuns<T>(
  scorer: () => ScorerChild,
  body: () => Promise<T>,
  { cleanup = async () => {}, logLines = 40 }: { cleanup?: () => Promise<unknown>; logLines?: number } = {},
): Promise<T> {
  try {
    return await body();
  } catch (err) {
    (err as Error).message += `\n--- scorer log (tail) ---\n${scorer().logTail(logLines)}`;
    throw err;
  } finally {
    await scorer().stop("SIGTERM");
    await cleanup();
  }
}
