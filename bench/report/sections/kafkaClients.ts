// Report chapter 10: the Kafka clients side by side through the port, and the restart stall.
import type { KafkaClientsResult } from "../../sections/kafkaClients.js";
import { fmt, ms, table, x } from "../reportFormat.js";
import type { SectionRenderer } from "../sectionRenderer.js";

const KINDS = ["produce", "consume", "passthrough"] as const;
const kindLabel = (kind: (typeof KINDS)[number]) =>
  kind === "produce"
    ? "idempotent acks=all produce"
    : kind === "passthrough"
      ? "consume→produce passthrough"
      : "consume";

export const kafkaClientsReport: SectionRenderer<KafkaClientsResult> = {
  heading: "10. Kafka clients",

  summaryRows: (kc) => [
    ...KINDS.map((kind) => [
      `10. Kafka clients, ${kindLabel(kind)}: kafkajs vs @platformatic/kafka`,
      `${fmt(kc.kafkajs[kind].recordsPerSecond)} vs ${fmt(kc.platformatic[kind].recordsPerSecond)} records/s; ${fmt(kc.kafkajs[kind].cpuUsPerRecord)} vs ${fmt(kc.platformatic[kind].cpuUsPerRecord)} CPU µs/record`,
      `@platformatic/kafka ${x(kc.platformatic[kind].recordsPerSecond / kc.kafkajs[kind].recordsPerSecond)} the records/s at ${x(kc.platformatic[kind].cpuUsPerRecord / kc.kafkajs[kind].cpuUsPerRecord)} the CPU`,
    ]),
    [
      "10. Kafka clients: restart stall (SIGKILL → restarted member's first batch), static vs dynamic membership",
      `${ms(kc.restart.staticMembership.stallMs)} vs ${ms(kc.restart.dynamicMembership.stallMs)} ms (rejoin ${ms(kc.restart.staticMembership.rejoinMs)} vs ${ms(kc.restart.dynamicMembership.rejoinMs)} ms after process start)`,
      `dynamic ${x(kc.restart.dynamicMembership.stallMs / kc.restart.staticMembership.stallMs)}`,
    ],
  ],

  chapter: (kc) => [
    `kafkajs 2.2.4 (the client before the port, configured as the scorer configured it) vs @platformatic/kafka (the ` +
      `product's client), both through the port (\`src/stream/kafkaPort.ts\`), in the bench process, one client at a time, ` +
      `${kc.rounds} alternating round(s) of ${kc.records} records of ${kc.recordBytes} B on ${kc.partitions} partitions; medians. ` +
      `Produce: idempotent, acks=all, 1000-record publishes, 4 in flight. Consume and passthrough: a fresh group, timed from ` +
      `its first batch; the passthrough publishes each delivery and commits its offsets after the acknowledgement. CPU is ` +
      `process.cpuUsage of the bench process. Restart stall: a probe process (bench/sections/kafkaRestartProbe.ts) is ` +
      `SIGKILLed and started again at once; time from the kill to the new process's first batch, its start included. ` +
      `The librdkafka clients are not built (a native build costs minutes on this shared 2-core machine).`,
    "",
    table(
      [
        "client",
        "produce rec/s",
        "produce CPU µs/rec",
        "consume rec/s",
        "consume CPU µs/rec",
        "passthrough rec/s",
        "passthrough CPU µs/rec",
      ],
      (["kafkajs", "platformatic"] as const).map((c) => [
        c === "kafkajs" ? "kafkajs 2.2.4" : "@platformatic/kafka",
        fmt(kc[c].produce.recordsPerSecond),
        fmt(kc[c].produce.cpuUsPerRecord),
        fmt(kc[c].consume.recordsPerSecond),
        fmt(kc[c].consume.cpuUsPerRecord),
        fmt(kc[c].passthrough.recordsPerSecond),
        fmt(kc[c].passthrough.cpuUsPerRecord),
      ]),
      { leftColumns: 1 },
    ),
    "",
    `Restart stall: static membership ${ms(kc.restart.staticMembership.stallMs)} ms, without ${ms(kc.restart.dynamicMembership.stallMs)} ms.`,
    "",
  ],
};
