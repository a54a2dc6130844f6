// Progress for long runs: a cli-progress bar on stderr when stderr is a terminal, and nothing
// otherwise (pipes and CI logs get the summary at the end, not a stream of redraws).
import cliProgress from "cli-progress";

export interface Progress {
  update(value: number, payload?: Record<string, string | number>): void;
  setTotal(total: number): void;
  stop(): void;
}

export interface ProgressOptions {
  readonly label: string;
  readonly total: number;
  readonly enabled: boolean;
  /** Extra text after the counts, with {placeholders} filled from update()'s payload. */
  readonly extra?: string;
  readonly payload?: Record<string, string | number>;
}

const silent: Progress = { update() {}, setTotal() {}, stop() {} };

export const progressWanted = (requested: boolean): boolean => requested && process.stderr.isTTY === true;

export function startProgress({
  label,
  total,
  enabled,
  extra = "",
  payload = {},
}: ProgressOptions): Progress {
  if (!enabled) return silent;
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: `${label.padEnd(8)} [{bar}] {percentage}% {value}/{total}${extra ? `  ${extra}` : ""}  {duration_formatted}`,
      hideCursor: true,
      clearOnComplete: true,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, payload);
  return {
    update: (value, more) => bar.update(value, more ?? {}),
    setTotal: (n) => bar.setTotal(n),
    stop: () => bar.stop(),
  };
}
