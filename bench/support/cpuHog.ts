// A noisy neighbour: another process spinning on one core at normal priority, as a compiler or
// a second service on the same host would. Started beside a scenario, stopped after it.
import { spawn } from "node:child_process";
import { once } from "node:events";

/** Starts the hog; the returned function stops it (and resolves once it has exited). */
export function startCpuHog(): () => Promise<void> {
  const hog = spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" });
  return async () => {
    if (hog.exitCode !== null || hog.signalCode !== null) return;
    const exited = once(hog, "exit");
    hog.kill("SIGKILL");
    await exited;
  };
}
