// The options every promotion command shares: where the control topic is. Like `decisions
// tail`, the brokers come from --kafka-brokers or $KAFKA_BROKERS; the topic's default is the
// scorer's (kafka.controlTopic).
import { userInfo, hostname } from "node:os";
import type { Command } from "commander";
import { createKafkaPort } from "../stream/kafka/index.js";
import { KafkaControlChannel } from "../stream/kafkaControlChannel.js";
import { brokerList, refuseArguments } from "./cliArguments.js";

export interface ControlChannelFlags {
  readonly kafkaBrokers?: string;
  readonly controlTopic?: string;
}

export const addControlChannelOptions = (command: Command): Command =>
  command
    .option("--kafka-brokers <list>", "Kafka brokers (default: $KAFKA_BROKERS)")
    .option(
      "--control-topic <topic>",
      "control topic (default: $KAFKA_CONTROL_TOPIC or fraud-scorer.control)",
    );

/** The channel, its topic created if missing. Exits with a one-line reason when no brokers are given. */
export async function openControlChannel(
  command: string,
  flags: ControlChannelFlags,
): Promise<KafkaControlChannel> {
  const brokers = brokerList(flags.kafkaBrokers ?? process.env.KAFKA_BROKERS);
  if (!brokers) refuseArguments(command, ["no brokers: give --kafka-brokers or set KAFKA_BROKERS"]);
  const topic = flags.controlTopic ?? process.env.KAFKA_CONTROL_TOPIC ?? "fraud-scorer.control";
  const channel = new KafkaControlChannel({
    port: createKafkaPort({ brokers: brokers!, clientId: "fraud-scorer-control" }),
    topic,
  });
  await channel.ensureTopic();
  return channel;
}

export const issuedBy = (): string => `${userInfo().username}@${hostname()}`;
