import { defineConfig } from "vitest/config";

// Two projects: unit tests (pure logic, no services) and integration tests, which talk to a
// real Kafka broker, schema registry and Redis. The integration global setup uses endpoints
// from the environment when given, and otherwise starts the local stack (stack/stack.sh).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          testTimeout: 60_000,
        },
      },
      {
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          globalSetup: ["test/integration/global-setup.ts"],
          testTimeout: 180_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
