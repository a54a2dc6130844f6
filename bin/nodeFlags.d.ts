export declare function scoringNodeFlags(
  command: string | undefined,
  execArgv: readonly string[],
  nodeOptions?: string,
): string[];
