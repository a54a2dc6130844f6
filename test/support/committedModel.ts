// The signed model committed under models/<name>/<version>/ (the newest if several).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

export function committedModelDir(): string {
  const candidates: string[] = [];
  for (const name of readdirSync("models")) {
    if (name === "trusted-keys" || !statSync(join("models", name)).isDirectory()) continue;
    for (const version of readdirSync(join("models", name))) {
      const dir = join("models", name, version);
      if (statSync(dir).isDirectory()) candidates.push(dir);
    }
  }
  const dir = candidates.sort().at(-1);
  if (!dir) throw new Error("no committed model under models/");
  return dir;
}

/** The model version its signed manifest declares (what the scorer namespaces state by). */
export const committedModelVersion = (): string =>
  (JSON.parse(readFileSync(join(committedModelDir(), "manifest.json"), "utf8")) as { modelVersion: string })
    .modelVersion;
