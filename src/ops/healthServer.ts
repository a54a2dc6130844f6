// Liveness, readiness and metrics over plain node:http: three routes do not need a framework.
// /healthz answers while the event loop does; /readyz only once every readiness condition holds
// (orchestrators keep traffic and rollouts waiting on it); /metrics is Prometheus text; /drift
// the model's input and score drift (PSI against training) as JSON, when the model carries the
// training distributions.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ReadinessState } from "./readiness.js";

export interface MetricsSource {
  readonly contentType: string;
  metricsText(): Promise<string>;
}

export interface HealthServerOptions {
  /** 0 picks a free port; the chosen one is returned. */
  readonly port: number;
  readonly host?: string;
  readonly metrics: MetricsSource;
  readonly readiness: () => ReadinessState;
  /** The latest drift snapshot; absent when the model has no training distributions. */
  readonly drift?: () => unknown;
}

export interface HealthServer {
  readonly port: number;
  close(): Promise<void>;
}

const isReadOnly = (req: IncomingMessage) => req.method === "GET" || req.method === "HEAD";

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { "content-type": contentType, "cache-control": "no-store" });
  res.end(body);
}

const sendJson = (res: ServerResponse, status: number, body: unknown) =>
  send(res, status, "application/json; charset=utf-8", JSON.stringify(body));

export function startHealthServer({
  port,
  host = "0.0.0.0",
  metrics,
  readiness,
  drift,
}: HealthServerOptions): Promise<HealthServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?", 1)[0];
    if (!isReadOnly(req)) {
      res.setHeader("allow", "GET, HEAD");
      return sendJson(res, 405, { error: "method not allowed" });
    }
    switch (path) {
      case "/healthz":
        return sendJson(res, 200, { status: "ok" });
      case "/readyz": {
        const state = readiness();
        return sendJson(res, state.ready ? 200 : 503, state);
      }
      case "/metrics":
        return void metrics.metricsText().then(
          (text) => send(res, 200, metrics.contentType, text),
          (err: unknown) => send(res, 500, "text/plain; charset=utf-8", `metrics failed: ${String(err)}\n`),
        );
      case "/drift":
        return drift
          ? sendJson(res, 200, drift())
          : sendJson(res, 404, {
              error: "drift not monitored: the model's manifest has no training distributions",
            });
      default:
        return sendJson(res, 404, {
          error: "not found",
          routes: ["/healthz", "/readyz", "/metrics", "/drift"],
        });
    }
  });
  // Scrapers and probes reconnect every few seconds; idle keep-alive sockets only delay close().
  server.keepAliveTimeout = 5_000;

  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done, fail) => {
            server.close((err) => (err ? fail(err) : done()));
            server.closeAllConnections();
          }),
      });
    });
  });
}
