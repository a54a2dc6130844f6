// The environment of a `fraud-scorer serve` the bench starts (through src/tools/scorerChild.ts):
// the bench's stack, its topics, a namespace and an ephemeral HMAC key, short-lived state.
import { randomBytes } from "node:crypto";
import { scorerEnvironment } from "../../src/tools/scorerChild.js";
import type { StackEndpoints } from "./stackEndpoints.js";
import type { BenchTopics } from "./benchKafka.js";

export const MODEL_DIR = "models/fraud-lstm/1.0.0";

export interface ScorerEnvOptions {
  readonly endpoints: StackEndpoints;
  readonly topics: BenchTopics;
  /** Card-state key namespace: one per scorer whose topics are new (offsets restart at 0). */
  readonly namespace: string;
  readonly overrides?: Record<string, string>;
}

export function scorerEnv({ endpoints, topics, namespace, overrides = {} }: ScorerEnvOptions) {
  return scorerEnvironment({
    kafkaBrokers: endpoints.kafkaBrokers,
    schemaRegistryUrl: endpoints.schemaRegistryUrl,
    redisUrl: endpoints.redisUrl,
    topics,
    groupId: `scorer-${topics.transactions}`,
    namespace,
    modelDir: MODEL_DIR,
    hmacKeyHex: randomBytes(32).toString("hex"),
    // Short-lived: whatever a crashed run leaves behind expires on its own.
    overrides: { KAFKA_CLIENT_ID: "fraud-scorer-bench", STATE_TTL_MS: "900000", ...overrides },
  });
}
