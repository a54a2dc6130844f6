// The real services the integration tests talk to, as the global setup found and checked them
// (test/integration/global-setup.ts). Tests ask testEndpoints() instead of reading the env.
import { inject } from "vitest";

export interface StackVersions {
  readonly kafka: string;
  readonly registry: string;
  readonly redis: string;
}

export interface StackEndpoints {
  /** Comma-separated host:port list, as in KAFKA_BROKERS. */
  readonly kafkaBrokers: string;
  /** Base URL of the Confluent-compatible API, e.g. http://127.0.0.1:8081/apis/ccompat/v7 */
  readonly schemaRegistryUrl: string;
  readonly redisUrl: string;
  readonly versions: StackVersions;
}

declare module "vitest" {
  export interface ProvidedContext {
    stackEndpoints: StackEndpoints;
  }
}

export function testEndpoints(): StackEndpoints {
  const endpoints = inject("stackEndpoints");
  if (endpoints === undefined) {
    throw new Error("no stack endpoints: integration tests run in vitest's `integration` project");
  }
  return endpoints;
}
