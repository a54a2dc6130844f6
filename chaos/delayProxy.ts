// A TCP proxy on loopback that holds every chunk for a fixed time in each direction: a slow
// network between the scorer and a dependency, without root (no tc/netem). Chunks keep their
// order: each is released `delayMs` after it arrived, and equal delays fire in arrival order.
import { createServer, connect, type Server, type Socket } from "node:net";
import { once } from "node:events";

export interface DelayProxy {
  readonly port: number;
  /** Changes the delay for chunks arriving from now on. */
  setDelay(ms: number): void;
  close(): Promise<void>;
}

export async function startDelayProxy({
  targetHost = "127.0.0.1",
  targetPort,
  listenPort = 0,
  delayMs,
}: {
  targetHost?: string;
  /** A function when the target is not known yet (a broker that must advertise the proxy's port). */
  targetPort: number | (() => number);
  listenPort?: number;
  delayMs: number;
}): Promise<DelayProxy> {
  let delay = delayMs;
  const sockets = new Set<Socket>();
  const forward = (from: Socket, to: Socket) => {
    from.on("data", (chunk) => {
      if (delay <= 0) to.write(chunk);
      else setTimeout(() => to.writable && to.write(chunk), delay);
    });
    from.on("end", () => setTimeout(() => to.end(), delay));
    from.on("error", () => to.destroy());
    from.on("close", () => setTimeout(() => to.destroy(), delay));
  };
  const server: Server = createServer((client) => {
    const upstream = connect(typeof targetPort === "number" ? targetPort : targetPort(), targetHost);
    sockets.add(client).add(upstream);
    client.on("close", () => sockets.delete(client));
    upstream.on("close", () => sockets.delete(upstream));
    forward(client, upstream);
    forward(upstream, client);
  });
  server.listen(listenPort, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("delay proxy: no port");
  return {
    port: address.port,
    setDelay: (ms) => {
      delay = ms;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, "close");
    },
  };
}
