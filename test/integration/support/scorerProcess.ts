// Runs `fraud-scorer serve` as a real child process (so SIGKILL and SIGTERM are real) and
// waits until it reports ready.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { freePort } from "./throwawayRedis.js";

export class ScorerProcess {
  readonly child: ChildProcess;
  readonly port: number;
  output = "";

  private constructor(child: ChildProcess, port: number) {
    this.child = child;
    this.port = port;
    child.stdout?.on("data", (d: Buffer) => (this.output += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (this.output += d.toString()));
  }

  static async start(env: Record<string, string>, { readyTimeoutMs = 90_000 } = {}): Promise<ScorerProcess> {
    const port = await freePort();
    const child = spawn(process.execPath, ["bin/fraud-scorer.js", "serve"], {
      env: { ...process.env, ...env, HTTP_PORT: String(port) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const scorer = new ScorerProcess(child, port);
    await scorer.waitReady(readyTimeoutMs);
    return scorer;
  }

  async waitReady(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.child.exitCode !== null) {
        throw new Error(
          `scorer exited with ${this.child.exitCode} before ready:\n${this.output.slice(-4000)}`,
        );
      }
      try {
        const res = await fetch(`http://127.0.0.1:${this.port}/readyz`);
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`scorer not ready after ${timeoutMs} ms:\n${this.output.slice(-4000)}`);
  }

  async metric(name: string, labels: Record<string, string> = {}): Promise<number> {
    const text = await (await fetch(`http://127.0.0.1:${this.port}/metrics`)).text();
    let total = 0;
    for (const line of text.split("\n")) {
      if (!line.startsWith(name)) continue;
      const m = /^(\w+)(\{[^}]*\})?\s+(\S+)$/.exec(line);
      if (!m || m[1] !== name) continue;
      const labelText = m[2] ?? "";
      if (Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`))) total += Number(m[3]);
    }
    return total;
  }

  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
    if (this.child.exitCode !== null) return this.child.exitCode;
    this.child.kill(signal);
    const [code] = (await once(this.child, "exit")) as [number | null];
    return code;
  }
}
