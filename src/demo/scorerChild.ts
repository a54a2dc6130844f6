// The scorer as the demo runs it: `node bin/fraud-scorer.js serve` as a child process with its
// own topics, group, state namespace and ephemeral HMAC key, logging to a file; ready when its
// /readyz says so (model verified and warm, schemas registered, group joined).
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { openSync, closeSync, readFileSync } from "node:fs";
import { createServer } from "node:net";

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, "close");
  return port;
}

export interface ScorerChildOptions {
  readonly root: string;
  readonly env: Record<string, string>;
  readonly logFile: string;
  readonly readyTimeoutMs?: number;
}

export class ScorerChild {
  readonly #child: ChildProcess;
  readonly #logFile: string;
  readonly port: number;

  private constructor(child: ChildProcess, port: number, logFile: string) {
    this.#child = child;
    this.port = port;
    this.#logFile = logFile;
  }

  static async start({
    root,
    env,
    logFile,
    readyTimeoutMs = 120_000,
  }: ScorerChildOptions): Promise<ScorerChild> {
    const port = await freePort();
    const log = openSync(logFile, "a");
    const child = spawn(process.execPath, ["bin/fraud-scorer.js", "serve"], {
      cwd: root,
      env: { ...process.env, ...env, HTTP_PORT: String(port), HTTP_HOST: "127.0.0.1" },
      stdio: ["ignore", log, log],
    });
    closeSync(log);
    const scorer = new ScorerChild(child, port, logFile);
    await scorer.#waitReady(readyTimeoutMs);
    return scorer;
  }

  logTail(lines = 20): string {
    try {
      return readFileSync(this.#logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
    } catch {
      return "";
    }
  }

  async #waitReady(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.#child.exitCode !== null)
        throw new Error(
          `the scorer exited with ${this.#child.exitCode} before it was ready:\n${this.logTail()}`,
        );
      try {
        if ((await fetch(`http://127.0.0.1:${this.port}/readyz`)).status === 200) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    await this.stop();
    throw new Error(`the scorer was not ready after ${timeoutMs / 1000} s:\n${this.logTail()}`);
  }

  async metricsText(): Promise<string> {
    return (await fetch(`http://127.0.0.1:${this.port}/metrics`)).text();
  }

  /** SIGTERM: it drains, commits and leaves the group. */
  async stop(): Promise<number | null> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return this.#child.exitCode;
    this.#child.kill("SIGTERM");
    const timer = setTimeout(() => this.#child.kill("SIGKILL"), 30_000);
    const [code] = (await once(this.#child, "exit")) as [number | null];
    clearTimeout(timer);
    return code;
  }
}
