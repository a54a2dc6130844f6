// The one entry point into the Kafka adapter.
export { createPlatformaticPort as createKafkaPort } from "./platformaticPort.js";
export type { KafkaConnectionSettings } from "./clientOptions.js";
