// The runtime stage of a Dockerfile as data: its working directory, environment and COPY
// lines. Simple on purpose (one instruction per line, no ARG expansion or heredocs): it reads
// this project's Dockerfile, and fails loudly on anything it does not understand.

export interface RuntimeCopy {
  /** The build stage copied from, or undefined for the build context. */
  readonly from: string | undefined;
  readonly sources: readonly string[];
  readonly destination: string;
}

export interface RuntimeStage {
  readonly workdir: string;
  readonly env: Readonly<Record<string, string>>;
  readonly copies: readonly RuntimeCopy[];
}

export function dockerfileRuntimeStage(dockerfile: string): RuntimeStage {
  const lines = dockerfile
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
  const lastFrom = lines.findLastIndex((line) => /^FROM\s/i.test(line));
  if (lastFrom < 0) throw new Error("the Dockerfile has no FROM line");
  let workdir = "/";
  const env: Record<string, string> = {};
  const copies: RuntimeCopy[] = [];
  for (const line of lines.slice(lastFrom + 1)) {
    if (line.endsWith("\\")) throw new Error(`continued lines are not understood: ${line}`);
    const [instruction, ...args] = line.split(/\s+/);
    switch (instruction!.toUpperCase()) {
      case "WORKDIR":
        workdir = args[0]!;
        break;
      case "ENV":
        for (const pair of args) {
          const [key, value] = pair.split("=");
          if (value === undefined) throw new Error(`ENV without KEY=VALUE is not understood: ${line}`);
          env[key!] = value;
        }
        break;
      case "COPY": {
        const options = args.filter((a) => a.startsWith("--"));
        const paths = args.filter((a) => !a.startsWith("--"));
        const from = options.find((o) => o.startsWith("--from="))?.slice("--from=".length);
        if (options.some((o) => !o.startsWith("--from=")) || paths.length < 2)
          throw new Error(`COPY line not understood: ${line}`);
        copies.push({ from, sources: paths.slice(0, -1), destination: paths.at(-1)! });
        break;
      }
      case "ADD":
        throw new Error(`ADD is not understood (use COPY): ${line}`);
    }
  }
  return { workdir, env, copies };
}
