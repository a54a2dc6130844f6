// The environment a test's scorer child runs with: the stack's endpoints, the test's own
// topics, group and state namespace, and the committed model.
import { committedModelDir } from "../../support/committedModel.js";
import type { StackEndpoints } from "../endpoints.js";
import type { TestTopics } from "./kafkaTestTopics.js";

export function scorerEnv(
  endpoints: StackEndpoints,
  topics: TestTopics,
  hmacKeyHex: string,
  overrides: Record<string, string> = {},
): Record<string, string> {
  return {
    KAFKA_BROKERS: endpoints.kafkaBrokers,
    SCHEMA_REGISTRY_URL: endpoints.schemaRegistryUrl,
    REDIS_URL: endpoints.redisUrl,
    KAFKA_TRANSACTIONS_TOPIC: topics.transactions,
    KAFKA_DECISIONS_TOPIC: topics.decisions,
    KAFKA_DLQ_TOPIC: topics.dlq,
    KAFKA_GROUP_ID: `scorer-${topics.transactions}`,
    REDIS_NAMESPACE: `test-${topics.transactions}`,
    MODEL_DIR: committedModelDir(),
    MODEL_PROVIDER: "cpu",
    STATE_HMAC_KEY: hmacKeyHex,
    LOG_LEVEL: "warn",
    ...overrides,
  };
}
