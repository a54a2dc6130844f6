// An esbuild plugin: inside the bundle, @platformatic/kafka's Ajv (the one instance its
// dist/utils.js creates, which compiles every client option validator on import) is
// scripts/lazyAjv2020.mjs, which compiles each schema the first time it validates. Nothing else
// that imports Ajv is touched (the client's schema-registry serdes keep their own).
import { fileURLToPath } from "node:url";

const KAFKA_CLIENT_AJV_USER = /[\\/]@platformatic[\\/]kafka[\\/]dist[\\/]utils\.js$/;
const LAZY_AJV = fileURLToPath(new URL("lazyAjv2020.mjs", import.meta.url));

export const lazyKafkaClientAjv = {
  name: "lazy-kafka-client-ajv",
  setup(build) {
    build.onResolve({ filter: /^ajv\/dist\/2020(\.js)?$/ }, (args) =>
      KAFKA_CLIENT_AJV_USER.test(args.importer) ? { path: LAZY_AJV } : undefined,
    );
  },
};
