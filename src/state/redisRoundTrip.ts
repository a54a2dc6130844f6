// One network round trip for a batch of single-key commands. On a standalone Redis that is one
// pipeline. On a Cluster a pipeline may only touch slots served by one node (ioredis rejects the
// whole pipeline otherwise), so the commands are split into one pipeline per node and the
// pipelines run in parallel: still one round trip of latency. Replies come back in input order.
import type { ChainableCommander, Cluster, Redis } from "ioredis";

export type RedisClient = Redis | Cluster;

export interface QueuedCommand {
  /** The command's key (every key of a multi-key command shares its hash tag). */
  readonly key: string;
  /**
   * Adds exactly one command to the pipeline, or, given a client, sends it and returns its
   * promise (nodeRoundTrip sends a lone command without a pipeline).
   */
  readonly enqueue: (target: ChainableCommander | Redis) => unknown;
}

export type CommandReply = [error: Error | null, reply: unknown];

const isCluster = (redis: RedisClient): redis is Cluster => "isCluster" in redis && redis.isCluster === true;

export async function roundTrip(
  redis: RedisClient,
  commands: readonly QueuedCommand[],
): Promise<CommandReply[]> {
  if (commands.length === 0) return [];
  if (!isCluster(redis)) return execPipeline(redis.pipeline(), commands);

  const groups = new Map<string, number[]>();
  for (let i = 0; i < commands.length; i++) {
    const group = nodeGroupOf(redis, clusterSlot(commands[i]!.key));
    const members = groups.get(group);
    if (members === undefined) groups.set(group, [i]);
    else members.push(i);
  }
  const replies = new Array<CommandReply>(commands.length);
  await Promise.all(
    [...groups.values()].map(async (indices) => {
      const groupReplies = await execPipeline(
        redis.pipeline(),
        indices.map((i) => commands[i]!),
      );
      indices.forEach((commandIndex, j) => (replies[commandIndex] = groupReplies[j]!));
    }),
  );
  return replies;
}

/**
 * One command per node, each touching keys of several slots of that node (a script flagged
 * allow-cross-slot-keys): ioredis's Cluster refuses such commands, so on a Cluster each goes to
 * the node's own client. `prepare` runs once per client before its first command (to define the
 * scripts there). Replies come back in input order.
 */
export async function nodeRoundTrip(
  redis: RedisClient,
  commands: readonly QueuedCommand[],
  prepare: (client: Redis) => void,
): Promise<CommandReply[]> {
  if (commands.length === 0) return [];
  if (!isCluster(redis)) {
    return commands.length === 1
      ? [await sendAlone(redis, commands[0]!)]
      : execPipeline(redis.pipeline(), commands);
  }
  const clients = new Map<string, Redis>();
  for (const node of redis.nodes("master")) clients.set(`${node.options.host}:${node.options.port}`, node);
  return Promise.all(
    commands.map(async (command) => {
      const slot = clusterSlot(command.key);
      const address = redis.slots[slot]?.[0];
      const client = address === undefined ? undefined : clients.get(address);
      // The slot, not the key: keys carry card ids, and this message ends up in logs.
      if (client === undefined) return [new Error(`no node serves slot ${slot}`), null];
      prepare(client);
      return sendAlone(client, command);
    }),
  );
}

/**
 * Whether the failures of a batch's per-node commands are the whole store's: every command
 * failed and together they asked every master the client knows (a standalone Redis is one).
 * A Cluster batch that only touched a dead master is that node's failure, not the store's: the
 * caller's circuit breaker must not open for the live masters' cards too.
 */
export function isWholeStoreFailure(redis: RedisClient, replies: readonly CommandReply[]): boolean {
  if (replies.length === 0 || replies.some(([error]) => error === null)) return false;
  // A dead master drops out of the pool: the live ones (or none) are what a batch could miss.
  return !isCluster(redis) || replies.length >= redis.nodes("master").length;
}

/**
 * Units (cards, touches…) grouped by the node serving their key, in input order within a group:
 * one group on a standalone Redis. What a multi-key script may touch in one call. `keyOf` is
 * only called on a Cluster: a standalone batch builds no key string per unit.
 */
export function groupByNode<T>(redis: RedisClient, units: readonly T[], keyOf: (unit: T) => string): T[][] {
  if (units.length === 0) return [];
  if (!isCluster(redis)) return [units.slice()];
  const groups = new Map<string, T[]>();
  for (const unit of units) {
    const group = nodeGroupOf(redis, clusterSlot(keyOf(unit)));
    const members = groups.get(group);
    if (members === undefined) groups.set(group, [unit]);
    else members.push(unit);
  }
  return [...groups.values()];
}

/**
 * One command on the client itself, its failure as a pipeline would report it. A one-command
 * pipeline cost a Pipeline object (which copies every defined script onto itself) and a second
 * copy of the command's bytes (Buffer.concat of the pipeline's writes): per batch, twice.
 */
async function sendAlone(client: Redis, command: QueuedCommand): Promise<CommandReply> {
  try {
    return [null, await (command.enqueue(client) as Promise<unknown>)];
  } catch (error) {
    return [error as Error, null];
  }
}

async function execPipeline(pipeline: ChainableCommander, commands: readonly QueuedCommand[]) {
  for (const command of commands) command.enqueue(pipeline);
  const replies = await pipeline.exec();
  // exec() resolves null only for a MULTI aborted by WATCH, which these pipelines never use.
  if (replies === null) throw new Error("Redis pipeline returned no replies");
  return replies;
}

// Before the slot map is known (client still connecting) each slot is its own group: correct,
// just more pipelines; ioredis holds them until the cluster is ready.
const nodeGroupOf = (cluster: Cluster, slot: number): string =>
  cluster.slots[slot]?.join(";") ?? `slot:${slot}`;

const CLUSTER_SLOTS = 16384;

// CRC16/XMODEM, the hash Redis Cluster uses for key slots.
const CRC16_TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
    table[i] = crc & 0xffff;
  }
  return table;
})();

/** The Redis Cluster slot of a key, honouring `{hash tags}` as Redis does. */
export function clusterSlot(key: string): number {
  let bytes = Buffer.from(key, "utf8");
  const open = bytes.indexOf(0x7b); // {
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1); // }
    if (close > open + 1) bytes = bytes.subarray(open + 1, close);
  }
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[((crc >> 8) ^ byte) & 0xff]!;
  return crc % CLUSTER_SLOTS;
}
