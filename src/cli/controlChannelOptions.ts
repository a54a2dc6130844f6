// The options every promotion command shares: where the control topic is. Rows of
// src/ops/commandOptions.ts (flags win over $KAFKA_BROKERS / $KAFKA_CONTROL_TOPIC), validated
// once by a zod schema; the topic's default is the scorer's (kafka.controlTopic).
import { userInfo, hostname } from "node:os";
import type { Command } from "commander";
import { z } from "zod";
import { createKafkaPort } from "../stream/kafka/index.js";
import { KafkaControlChannel } from "../stream/kafkaControlChannel.js";
import {
  addCommandOptions,
  commandOptionValues,
  type CommandOption,
  type ParsedOptions,
} from "../ops/commandOptions.js";
import { brokerListSchema } from "./brokerListSchema.js";
import { refuseArguments } from "./cliArguments.js";

export type ControlChannelFlags = {
  readonly kafkaBrokers?: string;
  readonly controlTopic?: string;
};

const CONTROL_CHANNEL_OPTIONS: readonly CommandOption[] = [
  {
    flag: "kafka-brokers",
    flagValue: "list",
    env: "KAFKA_BROKERS",
    help: "Kafka bootstrap brokers, comma-separated host:port",
  },
  {
    flag: "control-topic",
    flagValue: "topic",
    env: "KAFKA_CONTROL_TOPIC",
    fallback: "fraud-scorer.control",
    help: "control topic",
  },
];

export const addControlChannelOptions = (command: Command): Command =>
  addCommandOptions(command, CONTROL_CHANNEL_OPTIONS);

const controlChannelSchema = z.object({
  kafkaBrokers: z
    .string({ error: "no brokers: give --kafka-brokers or set KAFKA_BROKERS" })
    .pipe(brokerListSchema),
  controlTopic: z
    .string()
    .transform((s) => s.trim())
    .pipe(z.string().min(1, { error: "--control-topic must not be empty" })),
});

export type ControlChannelOptions = z.output<typeof controlChannelSchema> & {
  readonly kafkaBrokers: string[];
};

export function parseControlChannelOptions(
  flags: ControlChannelFlags,
  env: Readonly<Record<string, string | undefined>>,
): ParsedOptions<ControlChannelOptions> {
  const parsed = controlChannelSchema.safeParse(commandOptionValues(CONTROL_CHANNEL_OPTIONS, flags, env));
  if (!parsed.success) return { ok: false, problems: parsed.error.issues.map((i) => i.message) };
  return { ok: true, options: parsed.data as ControlChannelOptions };
}

/** The channel, its topic created if missing. Exits with a one-line reason when no brokers are given. */
export async function openControlChannel(
  command: string,
  flags: ControlChannelFlags,
): Promise<KafkaControlChannel> {
  const parsed = parseControlChannelOptions(flags, process.env);
  if (!parsed.ok) refuseArguments(command, parsed.problems);
  const { kafkaBrokers, controlTopic } = parsed.options;
  const channel = new KafkaControlChannel({
    port: createKafkaPort({ brokers: kafkaBrokers, clientId: "fraud-scorer-control" }),
    topic: controlTopic,
  });
  await channel.ensureTopic();
  return channel;
}

export const issuedBy = (): string => `${userInfo().username}@${hostname()}`;
