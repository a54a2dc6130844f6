// Report chapter 10: the Kafka clients side by side through the port, and the restart stall.
import type { ClientRow, KafkaClientsResult } from "../../sections/kafkaClients.js";
import { fmt, ms, table, x } from "../reportFormat.js";
import type { SectionRenderer } from "../sectionRenderer.js";

const KINDS = ["produce", "consume", "passthrough"] as const;
const kindLabel = (kind: (typeof KINDS)[number]) =>
  kind === "produce"
    ? "idempotent acks=all produce"
    : kind === "passthrough"
      ? "consume→produce passthrough"
      : "consume";

const client = (kc: KafkaClientsResult, name: string): ClientRow | undefined =>
  kc.clients.find((c) => c.name === name);

export const kafkaClientsReport: SectionRenderer<KafkaClientsResult> = {
  heading: "10. Kafka clients",

  summaryRows: (kc) => {
    const before = client(kc, "kafkajs");
    const product = client(kc, "platformatic");
    const rows: string[][] = [];
    if (before !== undefined && product !== undefined)
      for (const kind of KINDS) {
        const [a, b] = [before.figures[kind], product.figures[kind]];
        rows.push([
          `10. Kafka clients, ${kindLabel(kind)}: kafkajs vs @platformatic/kafka`,
          `${fmt(a.recordsPerSecond)} vs ${fmt(b.recordsPerSecond)} records/s; ${fmt(a.cpuUsPerRecord)} vs ${fmt(b.cpuUsPerRecord)} CPU µs/record`,
          `@platformatic/kafka ${x(b.recordsPerSecond / a.recordsPerSecond)} the records/s at ${x(b.cpuUsPerRecord / a.cpuUsPerRecord)} the CPU`,
        ]);
      }
    rows.push([
      "10. Kafka clients: restart stall (SIGKILL → restarted member's first batch), static vs dynamic membership",
      `${ms(kc.restart.staticMembership.stallMs)} vs ${ms(kc.restart.dynamicMembership.stallMs)} ms (rejoin ${ms(kc.restart.staticMembership.rejoinMs)} vs ${ms(kc.restart.dynamicMembership.rejoinMs)} ms after process start)`,
      `dynamic ${x(kc.restart.dynamicMembership.stallMs / kc.restart.staticMembership.stallMs)}`,
    ]);
    return rows;
  },

  chapter: (kc) => {
    const duplicates = kc.clients.filter((c) => c.extraRecords !== 0);
    return [
      `The candidates through the port (\`src/stream/kafkaPort.ts\`): kafkajs 2.2.4 (the client before the port, configured ` +
        `as the scorer configured it), @platformatic/kafka (the product's client, with the product's adapter) and, when one ` +
        `was built outside the repository, Confluent's librdkafka client (bench/support/confluentPort.ts). In the bench ` +
        `process, one client at a time, ${kc.rounds} alternating round(s) of ${kc.records} records of ${kc.recordBytes} B on ` +
        `${kc.partitions} partitions; medians. Produce: idempotent, acks=all, 1000-record publishes, 4 in flight. Consume ` +
        `and passthrough: a fresh group, timed from its join; the passthrough publishes each delivery and commits its ` +
        `offsets after the acknowledgement. CPU is process.cpuUsage of the bench process (native threads included). ` +
        `Restart stall: a probe process (bench/sections/kafkaRestartProbe.ts) on @platformatic/kafka is SIGKILLed and ` +
        `started again at once; time from the kill to the new process's first batch, its start included.` +
        (kc.loadAverage === undefined
          ? ""
          : ` Load average ${fmt(kc.loadAverage.start)} at the section's start, ${fmt(kc.loadAverage.end)} at its end.`),
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
        kc.clients.map((c) => [
          c.label,
          fmt(c.figures.produce.recordsPerSecond),
          fmt(c.figures.produce.cpuUsPerRecord),
          fmt(c.figures.consume.recordsPerSecond),
          fmt(c.figures.consume.cpuUsPerRecord),
          fmt(c.figures.passthrough.recordsPerSecond),
          fmt(c.figures.passthrough.cpuUsPerRecord),
        ]),
        { leftColumns: 1 },
      ),
      "",
      ...(kc.confluentAbsent !== undefined
        ? [`Confluent's client was not measured: ${kc.confluentAbsent}.`, ""]
        : []),
      ...(duplicates.length > 0
        ? [
            `Records written beyond those published (over all rounds): ${duplicates.map((c) => `${c.label} ${c.extraRecords}`).join(", ")}.`,
            "",
          ]
        : []),
      `Restart stall: static membership ${ms(kc.restart.staticMembership.stallMs)} ms, without ${ms(kc.restart.dynamicMembership.stallMs)} ms.`,
      "",
    ];
  },
};
