export declare const YOUNG_GENERATION_FLAG: string;
export declare function scoringNodeFlags(
  command: string | undefined,
  execArgv: readonly string[],
  nodeOptions?: string,
): string[];
