// Kafka brokers of the suite's own (KRaft, every node broker + controller), on spare ports, from
// the jars stack/stack.sh caches: a scenario that kills a broker or slows the wire never
// touches the shared broker. Clients can be pointed at a port other than the one a broker
// listens on (a delaying proxy's), since the advertised listener is what they reconnect to.
import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createHash } from "node:crypto";
import { once } from "node:events";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { connect } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { freePort } from "../src/ops/freePort.js";

export interface PrivateKafka {
  /** host:port list of the advertised (client-facing) listeners. */
  readonly brokers: string;
  /** The port each node listens on for clients (what a proxy forwards to). */
  readonly listenPorts: readonly number[];
  /** host:port list of the plaintext inter-broker listeners (the suite's own clients may use them). */
  readonly internalBrokers: string;
  kill(node: number): Promise<void>;
  restart(node: number): Promise<void>;
  /** The index of the node that is the KRaft quorum's leader (the active controller) now. */
  quorumLeader(): Promise<number>;
  stop(): Promise<void>;
}

export interface PrivateKafkaOptions {
  readonly root: string;
  readonly nodes?: number;
  /** Per node, a port clients are told to use instead of the listening one (a proxy's). */
  readonly advertisedPorts?: readonly number[];
  readonly dir: string;
  /**
   * The client-facing listener as SASL_SSL (SCRAM-SHA-512) with this certificate and user; the
   * internal listener stays plaintext on loopback, for the suite's own admin and readers.
   */
  readonly secure?: { readonly keystoreFile: string; readonly user: string; readonly password: string };
}

/** The jars `stack/stack.sh up` resolved (the same pom hash it uses). */
function kafkaLibs(root: string): string {
  const pom = readFileSync(join(root, "stack/pom.xml"), "utf8");
  const version = /<kafka\.version>(.*)<\/kafka\.version>/.exec(pom)?.[1];
  const hash = createHash("sha1").update(pom).digest("hex").slice(0, 10);
  const cache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "fraud-scorer");
  const libs = join(cache, `kafka-${version}-${hash}`);
  if (!existsSync(join(libs, ".complete")))
    throw new Error(`no Kafka jars in ${libs}: run npm run stack:up once`);
  return libs;
}

function javaBinary(root: string): string {
  const recorded = join(root, ".stack/kafka/java");
  if (existsSync(recorded)) return readFileSync(recorded, "utf8").trim();
  return execFileSync("bash", ["-c", "command -v java"], { encoding: "utf8" }).trim();
}

const execFileAsync = promisify(execFile);

const portAnswers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });

export async function startPrivateKafka(o: PrivateKafkaOptions): Promise<PrivateKafka> {
  const nodes = o.nodes ?? 1;
  const libs = kafkaLibs(o.root);
  const java = javaBinary(o.root);
  const clusterId = randomBytes(16).toString("base64url").replace(/^-/, "A");
  const external: number[] = [];
  const internal: number[] = [];
  const controller: number[] = [];
  for (let i = 0; i < nodes; i++) {
    external.push(await freePort());
    internal.push(await freePort());
    controller.push(await freePort());
  }
  const advertised = o.advertisedPorts ?? external;
  const voters = controller.map((port, i) => `${i + 1}@127.0.0.1:${port}`).join(",");
  const replicas = nodes;
  const minIsr = Math.min(2, nodes);
  const configOf = (i: number) => join(o.dir, `node-${i + 1}`, "server.properties");
  for (let i = 0; i < nodes; i++) {
    const nodeDir = join(o.dir, `node-${i + 1}`);
    mkdirSync(join(nodeDir, "data"), { recursive: true });
    writeFileSync(
      configOf(i),
      [
        "process.roles=broker,controller",
        `node.id=${i + 1}`,
        `controller.quorum.voters=${voters}`,
        `listeners=EXTERNAL://127.0.0.1:${external[i]},INTERNAL://127.0.0.1:${internal[i]},CONTROLLER://127.0.0.1:${controller[i]}`,
        `advertised.listeners=EXTERNAL://127.0.0.1:${advertised[i]},INTERNAL://127.0.0.1:${internal[i]}`,
        "controller.listener.names=CONTROLLER",
        "inter.broker.listener.name=INTERNAL",
        `listener.security.protocol.map=EXTERNAL:${o.secure ? "SASL_SSL" : "PLAINTEXT"},INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT`,
        ...(o.secure
          ? [
              "sasl.enabled.mechanisms=SCRAM-SHA-512",
              "listener.name.external.sasl.enabled.mechanisms=SCRAM-SHA-512",
              "listener.name.external.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;",
              "listener.name.external.ssl.keystore.type=PEM",
              `listener.name.external.ssl.keystore.location=${o.secure.keystoreFile}`,
            ]
          : []),
        `log.dirs=${join(nodeDir, "data")}`,
        `default.replication.factor=${replicas}`,
        `min.insync.replicas=${minIsr}`,
        `offsets.topic.replication.factor=${replicas}`,
        "offsets.topic.num.partitions=4",
        `transaction.state.log.replication.factor=${replicas}`,
        `transaction.state.log.min.isr=${minIsr}`,
        "transaction.state.log.num.partitions=4",
        `share.coordinator.state.topic.replication.factor=${replicas}`,
        `share.coordinator.state.topic.min.isr=${minIsr}`,
        "group.initial.rebalance.delay.ms=0",
        // How soon the controller fences a broker that stopped heartbeating, and so moves its
        // partitions' leadership and drops it from their ISR (until then acks=all writes with
        // min.insync.replicas 2 wait for it). Kafka's 9 s default is the whole stall when one of
        // three brokers dies; 3 s (6 missed heartbeats) still rides out a loaded machine's pauses.
        "broker.heartbeat.interval.ms=500",
        "broker.session.timeout.ms=3000",
        // When the dead broker was also the quorum's leader (combined mode), nothing is fenced
        // until the other controllers notice and elect a new leader: by default 2 s without a
        // fetch, then up to 1 s of election, and the stall was 5.1 s. Halved, as for the session.
        "controller.quorum.fetch.timeout.ms=1000",
        "controller.quorum.election.timeout.ms=500",
        "auto.create.topics.enable=false",
        "num.network.threads=2",
        "num.io.threads=2",
        // Small index files, as stack.sh sets them and for its reason: a new partition's first
        // index entries page-faulted 10 MiB sparse files into memory, stalling the broker.
        "log.index.size.max.bytes=1048576",
        "",
      ].join("\n"),
    );
    writeFileSync(
      join(nodeDir, "log4j2.properties"),
      [
        "status = warn",
        "appender.file.type = File",
        "appender.file.name = file",
        `appender.file.fileName = ${join(nodeDir, "server.log")}`,
        "appender.file.layout.type = PatternLayout",
        "appender.file.layout.pattern = [%d] %p %m (%c)%n",
        "rootLogger.level = WARN",
        "rootLogger.appenderRef.file.ref = file",
        "",
      ].join("\n"),
    );
    execFileSync(
      java,
      [
        "-cp",
        `${libs}/*`,
        `-Dlog4j2.configurationFile=${join(nodeDir, "log4j2.properties")}`,
        "kafka.tools.StorageTool",
        "format",
        "--cluster-id",
        clusterId,
        "--config",
        configOf(i),
        // SCRAM credentials are written into the metadata log at format time (KRaft).
        ...(o.secure
          ? ["--add-scram", `SCRAM-SHA-512=[name=${o.secure.user},password=${o.secure.password}]`]
          : []),
      ],
      { stdio: "ignore" },
    );
  }

  const children: (ChildProcess | undefined)[] = new Array(nodes).fill(undefined);
  const start = (i: number) => {
    const nodeDir = join(o.dir, `node-${i + 1}`);
    const log = openSync(join(nodeDir, "kafka.out"), "a");
    children[i] = spawn(
      java,
      [
        "-Xms128m",
        "-Xmx384m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        `-Dlog4j2.configurationFile=${join(nodeDir, "log4j2.properties")}`,
        "-cp",
        `${libs}/*`,
        "kafka.Kafka",
        configOf(i),
      ],
      { stdio: ["ignore", log, log] },
    );
    closeSync(log);
  };
  const awaitListening = async (i: number) => {
    const deadline = Date.now() + 180_000;
    while (!(await portAnswers(external[i]!))) {
      const child = children[i];
      if (child?.exitCode !== null && child?.exitCode !== undefined)
        throw new Error(`private Kafka node ${i + 1} exited during start-up`);
      if (Date.now() > deadline) throw new Error(`private Kafka node ${i + 1} not listening after 180 s`);
      await sleep(250);
    }
  };
  const kill = async (i: number) => {
    const child = children[i];
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGKILL");
    await once(child, "exit");
  };
  const stop = async () => {
    await Promise.all(children.map((_, i) => kill(i)));
    await rm(o.dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < nodes; i++) start(i);
    for (let i = 0; i < nodes; i++) await awaitListening(i);
  } catch (error) {
    await stop();
    throw error;
  }
  // Kafka's own tool (kafka-metadata-quorum.sh describe --status), asked through a live controller.
  const quorumLeader = async () => {
    const live = children.findIndex((c) => c !== undefined && c.exitCode === null && c.signalCode === null);
    const { stdout } = await execFileAsync(java, [
      "-cp",
      `${libs}/*`,
      `-Dlog4j2.configurationFile=${join(o.dir, "node-1", "log4j2.properties")}`,
      "org.apache.kafka.tools.MetadataQuorumCommand",
      "--bootstrap-controller",
      `127.0.0.1:${controller[live]}`,
      "describe",
      "--status",
    ]);
    const leaderId = /LeaderId:\s*(\d+)/.exec(stdout)?.[1];
    if (leaderId === undefined) throw new Error(`no LeaderId in the quorum's status: ${stdout}`);
    return Number(leaderId) - 1;
  };
  return {
    quorumLeader,
    brokers: advertised.map((port) => `127.0.0.1:${port}`).join(","),
    listenPorts: external,
    internalBrokers: internal.map((port) => `127.0.0.1:${port}`).join(","),
    kill,
    restart: async (i) => {
      start(i);
      await awaitListening(i);
    },
    stop,
  };
}
