// Each card's state applied exactly once: the txCount in its Redis state equals the number of
// its transactions that were sent. A replayed record applied twice, or a record whose state
// work was dropped, shows up here even when every decision was written.
import { Redis } from "ioredis";
import { decodeCardState } from "../src/features/cardStateCodec.js";
import { FEATURE_SCHEMA_VERSION } from "../src/features/featureVector.js";
import { RedisCardStateStore } from "../src/state/redisCardStateStore.js";

export interface CardStateAudit {
  readonly cards: number;
  /** Cards whose txCount differs from their transactions sent (missing state counts too). */
  readonly mismatched: number;
  readonly examples: readonly string[];
}

export async function auditCardState(o: {
  redisUrl: string;
  namespace: string;
  modelVersion: string;
  hmacKeyHex: string;
  perCard: ReadonlyMap<string, number>;
}): Promise<CardStateAudit> {
  const redis = new Redis(o.redisUrl, { maxRetriesPerRequest: 2 });
  try {
    const store = new RedisCardStateStore({
      redis,
      namespace: o.namespace,
      modelVersion: o.modelVersion,
      featureSchemaVersion: FEATURE_SCHEMA_VERSION,
      hmacKey: Buffer.from(o.hmacKeyHex, "hex"),
    });
    const cardIds = [...o.perCard.keys()];
    let mismatched = 0;
    const examples: string[] = [];
    for (let i = 0; i < cardIds.length; i += 500) {
      const chunk = cardIds.slice(i, i + 500);
      const { states } = await store.readBatch({ cardIds: chunk, deviceTouches: [], nowMs: Date.now() });
      chunk.forEach((cardId, k) => {
        const stored = states[k];
        const applied = stored === undefined ? 0 : decodeCardState(stored.bytes).txCount;
        if (applied !== o.perCard.get(cardId)) {
          mismatched++;
          // Positions, not card ids: the report must not carry raw card ids either.
          if (examples.length < 5)
            examples.push(`card #${i + k}: ${applied} applied of ${o.perCard.get(cardId)}`);
        }
      });
    }
    return { cards: cardIds.length, mismatched, examples };
  } finally {
    redis.disconnect();
  }
}
