import { describe, expect, it } from "vitest";
import { createLogger, hashCardId } from "../../../src/ops/logger.js";

function capture(level = "info") {
  const lines: string[] = [];
  const logger = createLogger({
    level,
    name: "test",
    destination: { write: (line) => void lines.push(line) },
  });
  return { logger, lines, parsed: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe("logger", () => {
  it("writes one JSON object per line with a readable level and the logger name", () => {
    const { logger, parsed } = capture();
    logger.info({ partition: 3 }, "joined");
    logger.debug("not at info");
    expect(parsed()).toEqual([
      expect.objectContaining({ level: "info", name: "test", partition: 3, msg: "joined" }),
    ]);
  });

  it("never writes a card id raw, wherever the field sits", () => {
    const { logger, lines, parsed } = capture();
    const card = "tok_4000123412341234";
    const other = "tok_5500000000000004";
    logger.warn(
      {
        cardId: card,
        decision: { card_id: card, tx: { cardId: card } },
        cardIds: [card, other],
        batch: { deep: { er: { cardId: card } } },
      },
      "state rebuilt",
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(card);
    expect(lines[0]).not.toContain(other);
    expect(parsed()[0]).toMatchObject({
      cardId: hashCardId(card),
      decision: { card_id: hashCardId(card), tx: { cardId: hashCardId(card) } },
      cardIds: [hashCardId(card), hashCardId(other)],
    });
  });

  it("hashes card ids to a short stable hex that tells cards apart", () => {
    expect(hashCardId("tok_a")).toMatch(/^[0-9a-f]{16}$/);
    expect(hashCardId("tok_a")).toBe(hashCardId("tok_a"));
    expect(hashCardId("tok_a")).not.toBe(hashCardId("tok_b"));
  });

  it("censors secret fields", () => {
    const { logger, lines } = capture();
    logger.error(
      {
        password: "p0",
        redis: { password: "p1", hmacKey: Buffer.from("k1-secret-bytes") },
        config: { kafka: { sasl: { password: "p2" }, ssl: { keyFile: "/run/secrets/k.pem" } } },
        headers: { authorization: "Bearer t0ken" },
      },
      "connection failed",
    );
    for (const secret of ["p0", "p1", "k1-secret-bytes", "p2", "/run/secrets/k.pem", "t0ken"])
      expect(lines[0]).not.toContain(secret);
    expect(lines[0]).toContain("[redacted]");
  });
});
