// Where the demo runs: against endpoints given in the environment, else against the local
// stack it brings up (stack/stack.sh), else — no Kafka to be had — offline, with the reason
// said plainly. Also finds the committed model the demo scores with.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

export interface DemoEndpoints {
  readonly kafkaBrokers: readonly string[];
  readonly schemaRegistryUrl: string;
  readonly redisUrl: string;
}

export type DemoEnvironment =
  | { readonly mode: "live"; readonly endpoints: DemoEndpoints; readonly from: string }
  | { readonly mode: "offline"; readonly reason: string };

export const ENDPOINT_VARS = ["KAFKA_BROKERS", "SCHEMA_REGISTRY_URL", "REDIS_URL"] as const;

export class DemoSetupError extends Error {
  override readonly name = "DemoSetupError";
}

const fromVars = (vars: Record<string, string | undefined>): DemoEndpoints => ({
  kafkaBrokers: (vars.KAFKA_BROKERS ?? "")
    .split(",")
    .map((b) => b.trim())
    .filter((b) => b !== ""),
  schemaRegistryUrl: vars.SCHEMA_REGISTRY_URL ?? "",
  redisUrl: vars.REDIS_URL ?? "",
});

export function readEndpointsFile(path: string): DemoEndpoints {
  const vars: Record<string, string> = {};
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0 && !line.trimStart().startsWith("#"))
      vars[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return fromVars(vars);
}

export interface ResolveOptions {
  readonly env: NodeJS.ProcessEnv;
  readonly root: string;
  /** Where the stack script's output goes (the user sees it start). */
  readonly log: (line: string) => void;
}

export async function resolveDemoEnvironment({ env, root, log }: ResolveOptions): Promise<DemoEnvironment> {
  const given = ENDPOINT_VARS.filter((v) => (env[v] ?? "").trim() !== "");
  if (given.length === ENDPOINT_VARS.length)
    return { mode: "live", endpoints: fromVars(env), from: "the environment" };
  if (given.length > 0)
    throw new DemoSetupError(
      `set all of ${ENDPOINT_VARS.join(", ")} or none (only ${given.join(", ")} is set); with none, the demo starts the local stack`,
    );
  log("no endpoints in the environment: bringing up the local stack (bash stack/stack.sh up)");
  const result = await runStackUp(root, log);
  const endpointsFile = join(root, ".stack", "endpoints.env");
  if (result.code === 0 && existsSync(endpointsFile))
    return {
      mode: "live",
      endpoints: readEndpointsFile(endpointsFile),
      from: "the local stack (stack/stack.sh)",
    };
  const why = result.lastError ?? `stack/stack.sh up exited with ${result.code}`;
  return {
    mode: "offline",
    reason: `no Kafka could be had: no endpoints were given (${ENDPOINT_VARS.join(", ")}) and the local stack did not start — ${why}.`,
  };
}

function runStackUp(
  root: string,
  log: (line: string) => void,
): Promise<{ code: number; lastError?: string }> {
  return new Promise((resolve) => {
    const child = spawn("bash", ["stack/stack.sh", "up"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    let lastError: string | undefined;
    let pending = "";
    const onData = (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) {
        if (line.trim() === "") continue;
        log(`  ${line}`);
        if (/ERROR/.test(line)) lastError = line.replace(/^stack: ERROR: /, "");
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("error", (err) => resolve({ code: 127, lastError: `cannot run bash: ${err.message}` }));
    child.on("close", (code) => resolve({ code: code ?? 1, ...(lastError ? { lastError } : {}) }));
  });
}

/** models/<name>/<version>/ holding a manifest: the newest version of the first name. */
export function newestCommittedModel(modelsDir: string): string {
  const candidates: string[] = [];
  if (existsSync(modelsDir)) {
    for (const name of readdirSync(modelsDir).sort()) {
      if (name === "trusted-keys" || !statSync(join(modelsDir, name)).isDirectory()) continue;
      for (const version of readdirSync(join(modelsDir, name))) {
        const dir = join(modelsDir, name, version);
        if (existsSync(join(dir, "manifest.json"))) candidates.push(dir);
      }
    }
  }
  const newest = candidates.sort((a, b) => a.localeCompare(b, "en", { numeric: true })).at(-1);
  if (!newest) throw new DemoSetupError(`no committed model under ${modelsDir}/<name>/<version>/`);
  return newest;
}
