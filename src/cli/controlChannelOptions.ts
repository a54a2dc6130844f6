// The options every promotion command shares: where the control topic is. Like `decisions
// tail`, flags win over $KAFKA_BROKERS / $KAFKA_CONTROL_TOPIC, and the merged values are
// validated once by a zod schema; the topic's default is the scorer's (kafka.controlTopic).
import { userInfo, hostname } from "node:os";
import type { Command } from "commander";
import { z } from "zod";
import { createKafkaPort } from "../stream/kafka/index.js";
import { KafkaControlChannel } from "../stream/kafkaControlChannel.js";
import { brokerListSchema } from "./brokerListSchema.js";
import { refuseArguments } from "./cliArguments.js";

export interface ControlChannelFlags {
  readonly kafkaBrokers?: string;
  readonly controlTopic?: string;
}

export const addControlChannelOptions = (command: Command): Command =>
  command
    .option(
      "--kafka-brokers <list>",
      "Kafka bootstrap brokers, comma-separated host:port [env KAFKA_BROKERS]",
    )
    .option(
      "--control-topic <topic>",
      "control topic (default: fraud-scorer.control) [env KAFKA_CONTROL_TOPIC]",
    );

const controlChannelSchema = z.object({
  kafkaBrokers: brokerListSchema.optional().refine((b) => b !== undefined, {
    error: "no brokers: give --kafka-brokers or set KAFKA_BROKERS",
  }),
  controlTopic: z
    .string()
    .transform((s) => s.trim())
    .pipe(z.string().min(1, { error: "--control-topic must not be empty" })),
});

export type ControlChannelOptions = z.output<typeof controlChannelSchema> & {
  readonly kafkaBrokers: string[];
};

const text = (v: string | undefined): string | undefined => (v === undefined || v === "" ? undefined : v);

export function parseControlChannelOptions(
  flags: ControlChannelFlags,
  env: Readonly<Record<string, string | undefined>>,
):
  | { readonly ok: true; readonly options: ControlChannelOptions }
  | { readonly ok: false; readonly problems: readonly string[] } {
  const parsed = controlChannelSchema.safeParse({
    kafkaBrokers: text(flags.kafkaBrokers) ?? text(env.KAFKA_BROKERS),
    controlTopic: text(flags.controlTopic) ?? text(env.KAFKA_CONTROL_TOPIC) ?? "fraud-scorer.control",
  });
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
