import { afterEach, describe, expect, it } from "vitest";
import { startHealthServer, type HealthServer } from "../../../src/ops/healthServer.js";
import { ScorerMetrics } from "../../../src/ops/metrics.js";
import { Readiness, SCORER_READINESS_CONDITIONS } from "../../../src/ops/readiness.js";

describe("health server", () => {
  let server: HealthServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const start = async () => {
    const metrics = new ScorerMetrics({ defaultMetrics: false });
    const readiness = new Readiness(SCORER_READINESS_CONDITIONS);
    server = await startHealthServer({
      port: 0,
      host: "127.0.0.1",
      metrics,
      readiness: () => readiness.state(),
    });
    const port = server.port;
    const url = (path: string) => `http://127.0.0.1:${port}${path}`;
    return { metrics, readiness, url };
  };

  it("answers /healthz while the process runs", async () => {
    const { url } = await start();
    expect(server!.port).toBeGreaterThan(0);
    const res = await fetch(url("/healthz"));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });

  it("answers /readyz with 503 and the reasons until every condition holds", async () => {
    const { readiness, url } = await start();
    readiness.set("modelVerified", true);
    readiness.set("groupJoined", false, "waiting for partition assignment");

    const notReady = await fetch(url("/readyz"));
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toMatchObject({
      ready: false,
      reasons: [
        "modelWarm: not yet",
        "schemasRegistered: not yet",
        "groupJoined: waiting for partition assignment",
      ],
    });

    for (const condition of SCORER_READINESS_CONDITIONS) readiness.set(condition, true);
    const ready = await fetch(url("/readyz"));
    expect(ready.status).toBe(200);
    const readyBody = (await ready.json()) as { ready: boolean; reasons: string[]; firstMetMs: object };
    expect(readyBody).toMatchObject({ ready: true, reasons: [] });
    // By the process's own clock, each condition once, in the order they first held.
    const firstMet = Object.entries(readyBody.firstMetMs);
    expect(firstMet.map(([name]) => name)).toEqual([
      "modelVerified",
      ...SCORER_READINESS_CONDITIONS.filter((c) => c !== "modelVerified"),
    ]);
    expect(firstMet.every(([, ms]) => ms > 0 && ms <= performance.now())).toBe(true);

    readiness.set("groupJoined", false, "rebalancing");
    expect((await fetch(url("/readyz"))).status).toBe(503);
  });

  it("serves Prometheus text on /metrics", async () => {
    const { metrics, url } = await start();
    metrics.countDeadLetter("truncated_frame");
    const res = await fetch(url("/metrics"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await res.text()).toContain('fraud_dlq_records_total{reason="truncated_frame"} 1');
  });

  it("refuses other paths and methods", async () => {
    const { url } = await start();
    expect((await fetch(url("/nope"))).status).toBe(404);
    expect((await fetch(url("/healthz"), { method: "POST" })).status).toBe(405);
  });

  it("closes while a keep-alive connection is open", async () => {
    const { url } = await start();
    await fetch(url("/healthz"), { headers: { connection: "keep-alive" } });
    await server!.close();
    server = undefined;
    await expect(fetch(url("/healthz"))).rejects.toThrow();
  });

  it("rejects when the port is taken", async () => {
    const { metrics } = await start();
    await expect(
      startHealthServer({
        port: server!.port,
        host: "127.0.0.1",
        metrics,
        readiness: () => ({ ready: true, reasons: [], firstMetMs: {} }),
      }),
    ).rejects.toThrow(/EADDRINUSE/);
  });
});
