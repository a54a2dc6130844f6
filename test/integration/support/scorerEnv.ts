// The environment a test's scorer child runs with: the stack's endpoints, the test's own
// topics, group and state namespace, and the committed model.
import { scorerEnvironment } from "../../../src/tools/scorerChild.js";
import { committedModelDir } from "../../support/committedModel.js";
import type { StackEndpoints } from "../endpoints.js";
import type { TestTopics } from "./kafkaTestTopics.js";

export const scorerEnv = (
  endpoints: StackEndpoints,
  topics: TestTopics,
  hmacKeyHex: string,
  overrides: Record<string, string> = {},
): Record<string, string> =>
  scorerEnvironment({
    kafkaBrokers: endpoints.kafkaBrokers,
    schemaRegistryUrl: endpoints.schemaRegistryUrl,
    redisUrl: endpoints.redisUrl,
    topics,
    groupId: `scorer-${topics.transactions}`,
    namespace: `test-${topics.transactions}`,
    modelDir: committedModelDir(),
    hmacKeyHex,
    overrides,
  });
