// The shape of bench/results/<date>.json: run metadata and one entry per section, either its
// result or the error that stopped it.
import type { BatchingResult } from "../sections/batching.js";
import type { CeilingResult } from "../sections/ceiling.js";
import type { ColdStartResult } from "../sections/coldStart.js";
import type { DecodeResult } from "../sections/decode.js";
import type { EndToEndResult } from "../sections/endToEnd.js";
import type { KafkaClientsResult } from "../sections/kafkaClients.js";
import type { LoadGeneratorResult } from "../sections/loadGenerator.js";
import type { ModelResult } from "../sections/model.js";
import type { HotPathResult } from "../sections/hotPath.js";
import type { NoisyNeighbourResult } from "../sections/noisyNeighbour.js";
import type { PromoteResult } from "../sections/promote.js";
import type { StateResult } from "../sections/state.js";
import type { BenchPlan } from "../benchPlan.js";

export interface SectionError {
  readonly error: string;
}

export interface BenchMeta {
  readonly date: string;
  readonly startedAt: string;
  readonly durationS: number;
  readonly smoke: boolean;
  readonly command: string;
  readonly commit: string;
  readonly machine: {
    readonly cpus: number;
    readonly cpuModel: string;
    readonly memoryGiB: number;
    readonly node: string;
    /**
     * The V8 flags the bench and its scorers ran with: bin/nodeFlags.js's start-up flags (the
     * young-generation size, the collector's threads, the old generation's floor) and
     * src/ops/v8Flags.ts's; absent in results from before them.
     */
    readonly v8Flags?: readonly string[];
    readonly platform: string;
    /** 1-minute load averages: other work on the machine shows up here. */
    readonly loadAverageAtStart: number;
    readonly loadAverageAtEnd: number;
  };
  readonly stack: {
    readonly kafkaBrokers: string;
    readonly redisUrl: string;
    readonly kafkaVersion?: string;
  };
  readonly sectionSeconds: Readonly<Record<string, number>>;
  readonly plan: BenchPlan;
}

export interface BenchResults {
  readonly meta: BenchMeta;
  readonly endToEnd: EndToEndResult | SectionError;
  readonly decode: DecodeResult | SectionError;
  readonly batching: BatchingResult | SectionError;
  readonly state: StateResult | SectionError;
  readonly model: ModelResult | SectionError;
  readonly ceiling: CeilingResult | SectionError;
  readonly coldStart: ColdStartResult | SectionError;
  readonly hotPath?: HotPathResult | SectionError;
  readonly noisyNeighbour?: NoisyNeighbourResult | SectionError;
  /** Absent from results written before the section existed. */
  readonly kafkaClients?: KafkaClientsResult | SectionError;
  readonly loadGenerator?: LoadGeneratorResult | SectionError;
  readonly promote?: PromoteResult | SectionError;
}

export const SECTION_NAMES = [
  "endToEnd",
  "decode",
  "batching",
  "state",
  "model",
  "ceiling",
  "coldStart",
  "hotPath",
  "noisyNeighbour",
  "kafkaClients",
  "loadGenerator",
  "promote",
] as const;
export type SectionName = (typeof SECTION_NAMES)[number];

export const isError = (value: unknown): value is SectionError =>
  typeof value === "object" && value !== null && "error" in value;
