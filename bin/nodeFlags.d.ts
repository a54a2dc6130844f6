export declare function givenScoringFlags(execArgv: readonly string[], nodeOptions?: string): string[];
export declare function scoringNodeFlags(
  command: string | undefined,
  execArgv: readonly string[],
  nodeOptions?: string,
): string[];
export declare function restartWithScoringFlags(command: string | undefined): void;
