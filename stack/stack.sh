#!/usr/bin/env bash
# The local stack without Docker: a single-node Kafka (KRaft, broker + controller) and Apicurio
# Registry, both run as plain JVM processes from Maven Central jars cached outside git, and the
# machine's Redis. `up` is idempotent and waits until every part answers; `down` stops only
# what `up` started (pid files) and never a Redis it found running. See stack/README.md.
#
#   bash stack/stack.sh up [--brokers N] [--redis-cluster] | down | status
#
# Variants, for the fault suite and for trying the scorer on them: `--brokers 3` runs a 3-node
# KRaft cluster (every node broker + controller; replication 3, min.insync.replicas 2) on
# 9092/9094/9096 (controllers 9093/9095/9097); `--redis-cluster` runs three Redis masters in
# cluster mode on 7000-7002 instead of using the Redis on 6379. The variant is remembered in
# .stack/mode.env until `down`.
set -euo pipefail
export LC_ALL=C

STACK_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$STACK_DIR")
# The project's pinned Node 22 (node_modules/.bin/node) runs the TypeScript helpers below, as
# it does for npm scripts, whatever node the machine has.
export PATH="$ROOT/node_modules/.bin:$PATH"
STATE="$ROOT/.stack"
LOGS="$STATE/logs"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/fraud-scorer"

HOST=127.0.0.1
# STACK_*_PORT move a second stack off the usual ports (nothing else needs to change).
KAFKA_PORT=${STACK_KAFKA_PORT:-9092}
CONTROLLER_PORT=${STACK_CONTROLLER_PORT:-9093}
REGISTRY_PORT=${STACK_REGISTRY_PORT:-8081}
REGISTRY_MANAGEMENT_PORT=${STACK_REGISTRY_MANAGEMENT_PORT:-9081} # Quarkus management interface: /health/ready
REDIS_PORT=${STACK_REDIS_PORT:-6379}

read -r -a REDIS_CLUSTER_PORTS <<<"${STACK_REDIS_CLUSTER_PORTS:-7000 7001 7002}"

# The variant: from the flags of `up`, else from what the last `up` recorded.
KAFKA_NODES=1
REDIS_CLUSTER=0
MODE_FILE=$(dirname "$STACK_DIR")/.stack/mode.env
if [[ -f $MODE_FILE ]]; then
  # shellcheck disable=SC1090 # written by this script: KAFKA_NODES=… REDIS_CLUSTER=…
  . "$MODE_FILE"
fi
if [[ ${1:-} == up ]]; then
  KAFKA_NODES=1
  REDIS_CLUSTER=0
  args=("${@:2}")
  for ((i = 0; i < ${#args[@]}; i++)); do
    case ${args[i]} in
    --brokers)
      KAFKA_NODES=${args[i + 1]:-}
      i=$((i + 1))
      [[ $KAFKA_NODES =~ ^[1-9]$ ]] || {
        echo "stack: ERROR: --brokers takes a number from 1 to 9" >&2
        exit 2
      }
      ;;
    --redis-cluster) REDIS_CLUSTER=1 ;;
    *)
      echo "stack: ERROR: unknown option ${args[i]} (up takes --brokers N and --redis-cluster)" >&2
      exit 2
      ;;
    esac
  done
fi

kafka_port_of() { echo $((KAFKA_PORT + 2 * ($1 - 1))); }
controller_port_of() { echo $((CONTROLLER_PORT + 2 * ($1 - 1))); }
KAFKA_BROKERS=""
for ((node = 1; node <= KAFKA_NODES; node++)); do
  KAFKA_BROKERS+="${KAFKA_BROKERS:+,}$HOST:$(kafka_port_of "$node")"
done
SCHEMA_REGISTRY_URL="http://$HOST:$REGISTRY_PORT/apis/ccompat/v7"
REDIS_URL="redis://$HOST:$REDIS_PORT"
if ((REDIS_CLUSTER)); then
  # The first master; cluster-aware clients discover the others from it.
  REDIS_PORT=${REDIS_CLUSTER_PORTS[0]}
  REDIS_URL="redis://$HOST:$REDIS_PORT"
fi

KAFKA_MIN_JAVA=17
REGISTRY_MIN_JAVA=21 # Apicurio 3.3 is compiled for Java 21 (class file version 65)
START_TIMEOUT_S=120

pom_property() { sed -n "s:.*<$1>\(.*\)</$1>.*:\1:p" "$STACK_DIR/pom.xml" | sed -n 1p; }
KAFKA_VERSION=$(pom_property kafka.version)
APICURIO_VERSION=$(pom_property apicurio.version)
# Keyed by the pom's content, so editing a version or a logging jar resolves afresh.
POM_HASH=$(sha1sum "$STACK_DIR/pom.xml" | cut -c1-10)
KAFKA_LIBS="$CACHE/kafka-$KAFKA_VERSION-$POM_HASH"
REGISTRY_HOME="$CACHE/apicurio-registry-app-$APICURIO_VERSION"

KAFKA_PID="$STATE/kafka.pid"
REGISTRY_PID="$STATE/registry.pid"
REDIS_PID="$STATE/redis.pid"
# Present while this clone uses a broker or registry that another process (another clone's
# stack, a CI service) runs: `status` reports it, `down` leaves it alone.
KAFKA_SHARED="$STATE/kafka.shared"
REGISTRY_SHARED="$STATE/registry.shared"

say() { printf 'stack: %s\n' "$*"; }
die() {
  printf 'stack: ERROR: %s\n' "$*" >&2
  exit 1
}
now_s() { date +%s; }

# --- processes ------------------------------------------------------------------------------

port_open() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

pid_of() { [[ -s $1 ]] && cat "$1"; }

# A pid file is trusted only while its process is alive and still the program we started
# (pids are reused): java processes carry a -Dfraud-scorer.stack=NAME marker.
owns() {
  local pidfile=$1 marker=$2 pid
  pid=$(pid_of "$pidfile") || return 1
  [[ -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -- "$marker" >/dev/null
}

# Starts a command in its own session (so it outlives the shell, npm or vitest that ran
# `up`), with stdout and stderr appended to a log and every other inherited descriptor closed
# (a pipe or the stack's lock held by a daemon would hang whoever waits on it). The child
# writes its own pid before exec.
spawn() {
  local pidfile=$1 log=$2 dir=$3
  shift 3
  rm -f "$pidfile"
  # shellcheck disable=SC2016 # $$, $fd and $@ expand in the child, on purpose
  (cd "$dir" && exec setsid bash -c '
    echo $$ >"$0"
    for fd in /proc/$$/fd/*; do
      fd=${fd##*/}
      if ((fd > 2)); then eval "exec $fd>&-" 2>/dev/null; fi
    done
    exec "$@"' "$pidfile" "$@" </dev/null >>"$log" 2>&1) &
  for _ in $(seq 1 50); do
    [[ -s $pidfile ]] && return 0
    sleep 0.1
  done
  die "could not start: $*"
}

stop() {
  local name=$1 pidfile=$2 marker=$3 pid
  if ! owns "$pidfile" "$marker"; then
    rm -f "$pidfile"
    return 0
  fi
  pid=$(pid_of "$pidfile")
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 300); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    say "$name did not stop within 30 s; killing pid $pid"
    kill -KILL "$pid" 2>/dev/null || true
    sleep 0.5
  fi
  rm -f "$pidfile"
  say "$name stopped (pid $pid)"
}

# Waits until `check` succeeds; fails early, with the log's tail, if the process died.
await() {
  local name=$1 pidfile=$2 marker=$3 log=$4 check=$5 deadline
  deadline=$(($(now_s) + START_TIMEOUT_S))
  until $check; do
    if ! owns "$pidfile" "$marker"; then
      tail -n 40 "$log" >&2 || true
      die "$name exited during start-up; log: $log"
    fi
    if (($(now_s) > deadline)); then
      tail -n 40 "$log" >&2 || true
      die "$name not healthy after ${START_TIMEOUT_S} s; log: $log"
    fi
    sleep 0.25
  done
}

# --- Java -----------------------------------------------------------------------------------

# A JDK's version from its `release` file (no JVM start), else from `java -version`.
java_version() {
  local home
  home=$(dirname "$(dirname "$(readlink -f "$1")")")
  if [[ -r $home/release ]]; then
    sed -n 's/^JAVA_VERSION="\(.*\)"/\1/p' "$home/release"
  else
    "$1" -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | sed -n 1p
  fi
}

java_major() { java_version "$1" | sed -n 's/^\([0-9][0-9]*\).*/\1/p'; }

# The first JDK of at least version $1: JAVA_HOME's or PATH's when new enough, otherwise the
# newest under /usr/lib/jvm (where this machine keeps a second JDK).
find_java() {
  local min=$1 candidate major best="" best_major=0
  for candidate in ${JAVA_HOME:+"$JAVA_HOME/bin/java"} "$(command -v java || true)"; do
    [[ -x $candidate ]] || continue
    major=$(java_major "$candidate")
    if [[ -n $major ]] && ((major >= min)); then
      echo "$candidate"
      return 0
    fi
  done
  for candidate in /usr/lib/jvm/*/bin/java; do
    [[ -x $candidate ]] || continue
    major=$(java_major "$candidate")
    if [[ -n $major ]] && ((major >= min && major > best_major)); then
      best=$candidate
      best_major=$major
    fi
  done
  [[ -n $best ]] && echo "$best"
}

# --- jars (resolved once into the cache) ----------------------------------------------------

# Maven's own output goes to a log (it prints stray colour codes even when quiet).
mvn_quiet() {
  mvn -B -q --no-transfer-progress -Dstyle.color=never -f "$STACK_DIR/pom.xml" "$@" \
    >>"$LOGS/maven.log" 2>&1 || {
    tail -n 30 "$LOGS/maven.log" >&2
    return 1
  }
}

fetch_kafka() {
  [[ -f $KAFKA_LIBS/.complete ]] && return 0
  command -v mvn >/dev/null || die "Maven (mvn) is needed once to fetch the Kafka jars"
  say "resolving Kafka $KAFKA_VERSION jars into $KAFKA_LIBS (once)"
  mkdir -p "$CACHE"
  local tmp
  tmp=$(mktemp -d "$CACHE/.kafka-XXXXXX")
  mvn_quiet dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp/libs" ||
    die "Maven could not resolve stack/pom.xml; log: $LOGS/maven.log"
  touch "$tmp/libs/.complete"
  rm -rf "$KAFKA_LIBS"
  mv "$tmp/libs" "$KAFKA_LIBS"
  rm -rf "$tmp"
}

fetch_registry() {
  [[ -f $REGISTRY_HOME/.complete ]] && return 0
  command -v mvn >/dev/null || die "Maven (mvn) is needed once to fetch Apicurio Registry"
  say "fetching Apicurio Registry $APICURIO_VERSION into $REGISTRY_HOME (once)"
  mkdir -p "$CACHE"
  local tmp archive
  tmp=$(mktemp -d "$CACHE/.registry-XXXXXX")
  # The app's `all` assembly is the runnable Quarkus fast-jar layout (quarkus-run.jar + lib/).
  mvn_quiet dependency:copy -Dartifact="io.apicurio:apicurio-registry-app:$APICURIO_VERSION:tar.gz:all" \
    -DoutputDirectory="$tmp" ||
    die "Maven could not fetch io.apicurio:apicurio-registry-app:$APICURIO_VERSION; log: $LOGS/maven.log"
  archive=$(ls "$tmp"/*.tar.gz)
  mkdir -p "$tmp/app"
  tar -xzf "$archive" -C "$tmp/app"
  [[ -f $tmp/app/quarkus-run.jar ]] || die "no quarkus-run.jar in $archive"
  touch "$tmp/app/.complete"
  rm -rf "$REGISTRY_HOME"
  mv "$tmp/app" "$REGISTRY_HOME"
  rm -rf "$tmp"
}

# --- Kafka ----------------------------------------------------------------------------------

KAFKA_MARKER="-Dfraud-scorer.stack=kafka"

# Node 1 is the single-node stack's broker; nodes 2..N exist with --brokers N.
kafka_dir_of() { if (($1 == 1)); then echo "$STATE/kafka"; else echo "$STATE/kafka-$1"; fi; }
kafka_pid_of() { if (($1 == 1)); then echo "$KAFKA_PID"; else echo "$STATE/kafka-$1.pid"; fi; }
kafka_marker_of() { if (($1 == 1)); then echo "$KAFKA_MARKER"; else echo "$KAFKA_MARKER-$1"; fi; }
# A node's log file: name.ext for node 1, name-N.ext for node N (kafka_log_of N name ext).
kafka_log_of() { if (($1 == 1)); then echo "$LOGS/$2.$3"; else echo "$LOGS/$2-$1.$3"; fi; }

kafka_quorum() {
  if ((KAFKA_NODES == 1)); then
    echo "controller.quorum.bootstrap.servers=$HOST:$CONTROLLER_PORT"
    return 0
  fi
  local node voters=""
  for ((node = 1; node <= KAFKA_NODES; node++)); do
    voters+="${voters:+,}$node@$HOST:$(controller_port_of "$node")"
  done
  echo "controller.quorum.voters=$voters"
}

kafka_config() {
  local dir=$1 node=${2:-1} port controller replicas min_isr
  port=$(kafka_port_of "$node")
  controller=$(controller_port_of "$node")
  replicas=$((KAFKA_NODES < 3 ? KAFKA_NODES : 3))
  min_isr=$((KAFKA_NODES < 2 ? 1 : 2))
  cat >"$dir/server.properties" <<EOF
# Generated by stack/stack.sh on every start; edit the script, not this file.
process.roles=broker,controller
node.id=$node
$(kafka_quorum)
listeners=PLAINTEXT://$HOST:$port,CONTROLLER://$HOST:$controller
advertised.listeners=PLAINTEXT://$HOST:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$dir/data

# One node: every internal topic has one replica; with --brokers 3, three replicas and two
# in sync for a write. Few partitions for them, since each is loaded by a coordinator on a
# 2-core machine; the scorer's own topics are created explicitly.
num.partitions=1
default.replication.factor=$replicas
min.insync.replicas=$min_isr
offsets.topic.replication.factor=$replicas
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=$replicas
transaction.state.log.min.isr=$min_isr
transaction.state.log.num.partitions=4
share.coordinator.state.topic.replication.factor=$replicas
share.coordinator.state.topic.min.isr=$min_isr
share.coordinator.state.topic.num.partitions=4

# Tests join and leave groups all the time; do not wait for more members.
group.initial.rebalance.delay.ms=0
# A misspelt topic should fail loudly, not appear with one partition.
auto.create.topics.enable=false

num.network.threads=2
num.io.threads=4
num.recovery.threads.per.data.dir=1
log.retention.hours=24

# Index files of 1 MiB, not 10: a new segment's offset and time indexes are sparse files of this
# size, mapped into memory, and on this VM the first index entries of a new partition (after
# its first 4 KiB of records) page-faulted into the kernel zero-filling them. A perf profile of
# the broker put 380 of 554 request-handler samples in those faults: produce requests took
# 40-150 ms each, both cores stayed busy for about half a second, and a scorer started
# straight into 1,000 tx/s on new topics stalled 250-400 ms after the load began (p99 of its
# first 3 s above 250 ms in 22 of 42 starts); with 1 MiB, none above 120 ms in 24. A segment now
# rolls once its time index is full, at about 341 MiB of records instead of 1 GiB.
log.index.size.max.bytes=1048576
EOF
  cat >"$dir/log4j2.properties" <<EOF
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = $(kafka_log_of "$node" kafka-server log)
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.request.name = kafka.request.logger
logger.request.level = WARN
EOF
}

# Kafka's cluster ids are 16 random bytes, URL-safe base64 without padding; a leading '-'
# would read as an option on the StorageTool's command line.
random_cluster_id() {
  local id
  while :; do
    id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
    [[ $id != -* ]] && echo "$id" && return 0
  done
}

kafka_start() {
  if owns "$KAFKA_PID" "$KAFKA_MARKER"; then
    say "kafka already running (pid $(pid_of "$KAFKA_PID"))"
    [[ $(cat "$STATE/kafka/nodes" 2>/dev/null || echo 1) == "$KAFKA_NODES" ]] ||
      die "kafka runs with $(cat "$STATE/kafka/nodes" 2>/dev/null || echo 1) broker(s), not $KAFKA_NODES: run down first"
    local node
    for ((node = 2; node <= KAFKA_NODES; node++)); do kafka_start_node "$node"; done
    return 0
  fi
  rm -f "$KAFKA_PID" "$KAFKA_SHARED"
  if port_open "$KAFKA_PORT"; then
    ((KAFKA_NODES == 1)) ||
      die "port $KAFKA_PORT is taken (another stack?); --brokers $KAFKA_NODES needs its ports free"
    kafka_metadata || die "port $KAFKA_PORT is taken by a process that does not answer as a Kafka broker"
    touch "$KAFKA_SHARED"
    say "kafka: using the broker already answering on $KAFKA_BROKERS (not managed by this stack)"
    return 0
  fi
  fetch_kafka
  if [[ -f $STATE/kafka/data/meta.properties ]] &&
    [[ $(cat "$STATE/kafka/nodes" 2>/dev/null || echo 1) != "$KAFKA_NODES" ]]; then
    die "the broker data in .stack/ was formatted for $(cat "$STATE/kafka/nodes" 2>/dev/null || echo 1) broker(s), not $KAFKA_NODES: run down first"
  fi
  local node
  for ((node = 1; node <= KAFKA_NODES; node++)); do kafka_start_node "$node"; done
}

kafka_start_node() {
  local node=$1 java dir pidfile marker port controller
  dir=$(kafka_dir_of "$node")
  pidfile=$(kafka_pid_of "$node")
  marker=$(kafka_marker_of "$node")
  owns "$pidfile" "$marker" && return 0
  port=$(kafka_port_of "$node")
  controller=$(controller_port_of "$node")
  port_open "$port" && die "port $port is taken by a process this stack did not start"
  port_open "$controller" && die "port $controller is taken by a process this stack did not start"
  java=$(find_java "$KAFKA_MIN_JAVA") || die "Kafka needs Java >= $KAFKA_MIN_JAVA; none found"
  mkdir -p "$dir/data"
  kafka_config "$dir" "$node"
  local cp="$KAFKA_LIBS/*"
  if [[ ! -f $dir/data/meta.properties ]]; then
    # Every node of a cluster is formatted with the same id; one node formats itself standalone.
    local cluster_id
    [[ -s $STATE/kafka-cluster-id ]] || random_cluster_id >"$STATE/kafka-cluster-id"
    cluster_id=$(cat "$STATE/kafka-cluster-id")
    local standalone=()
    ((KAFKA_NODES == 1)) && standalone=(--standalone)
    "$java" -cp "$cp" -Dlog4j2.configurationFile="$dir/log4j2.properties" kafka.tools.StorageTool \
      format "${standalone[@]}" --cluster-id "$cluster_id" --config "$dir/server.properties" \
      >>"$LOGS/kafka-format.log" 2>&1 || die "formatting Kafka storage failed; log: $LOGS/kafka-format.log"
    echo "$cluster_id" >"$dir/cluster-id"
    mkdir -p "$STATE/kafka"
    echo "$KAFKA_NODES" >"$STATE/kafka/nodes"
  fi
  echo "$java" >"$dir/java"
  # Each collection's pause, with its CPU time beside its wall time (gc+cpu: User, Sys, Real): a
  # pause whose Real far exceeds its CPU waited for a core. Bench section 9 beside the CPU hog once
  # saw 215 decisions made by the rules while one of the broker's young collections took 210 ms
  # (jstat, 2026-12-08), and nothing said why.
  local gc_log
  gc_log=$(kafka_log_of "$node" kafka-gc log)
  spawn "$pidfile" "$(kafka_log_of "$node" kafka out)" "$dir" \
    "$java" -Xms256m -Xmx512m -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExplicitGCInvokesConcurrent \
    "-Xlog:gc,gc+cpu:file=$gc_log:time,uptimemillis:filecount=2,filesize=10m" \
    -Djava.awt.headless=true "$marker" -Dlog4j2.configurationFile="$dir/log4j2.properties" \
    -cp "$cp" kafka.Kafka "$dir/server.properties"
  say "kafka $KAFKA_VERSION node $node starting on $HOST:$port (pid $(pid_of "$pidfile"), $(java_version "$java"))"
}

kafka_port_open() { port_open "$KAFKA_PORT"; }
kafka_node_port_open() { port_open "$(kafka_port_of "$AWAITED_NODE")"; }

# A broker that answers a metadata request (another clone's stack, a CI service) is used as it
# is; a port held by anything else is still an error.
kafka_metadata() {
  local tsx="$ROOT/node_modules/.bin/tsx"
  [[ -x $tsx ]] || die "node_modules is missing: run npm ci (the broker is probed through the Kafka port)"
  "$tsx" "$STACK_DIR/probe-kafka.ts" "$KAFKA_BROKERS" >>"$LOGS/kafka-probe.log" 2>&1
}

kafka_shared() { [[ -f $KAFKA_SHARED ]]; }

kafka_await() {
  if ! kafka_shared; then
    local node
    for ((node = 1; node <= KAFKA_NODES; node++)); do
      AWAITED_NODE=$node
      await "kafka node $node" "$(kafka_pid_of "$node")" "$(kafka_marker_of "$node")" \
        "$(kafka_log_of "$node" kafka-server log)" kafka_node_port_open
    done
  fi
  local tsx="$ROOT/node_modules/.bin/tsx"
  [[ -x $tsx ]] || die "node_modules is missing: run npm ci (the topics are created through the Kafka port)"
  "$tsx" "$STACK_DIR/ensure-topics.ts" "$KAFKA_BROKERS" | sed 's/^/stack: kafka /' ||
    die "Kafka answers on $KAFKA_BROKERS but the topics could not be ensured; log: $LOGS/kafka-server.log"
}

# --- Apicurio Registry ----------------------------------------------------------------------

REGISTRY_MARKER="-Dfraud-scorer.stack=registry"

registry_start() {
  if owns "$REGISTRY_PID" "$REGISTRY_MARKER"; then
    say "registry already running (pid $(pid_of "$REGISTRY_PID"))"
    return 0
  fi
  rm -f "$REGISTRY_PID" "$REGISTRY_SHARED"
  if port_open "$REGISTRY_PORT"; then
    registry_api ||
      die "port $REGISTRY_PORT is taken by a process that does not answer as a schema registry at $SCHEMA_REGISTRY_URL"
    touch "$REGISTRY_SHARED"
    say "registry: using the registry already answering at $SCHEMA_REGISTRY_URL (not managed by this stack)"
    return 0
  fi
  port_open "$REGISTRY_MANAGEMENT_PORT" &&
    die "port $REGISTRY_MANAGEMENT_PORT is taken by a process this stack did not start"
  fetch_registry
  local java dir="$STATE/registry"
  java=$(find_java "$REGISTRY_MIN_JAVA") ||
    die "Apicurio Registry $APICURIO_VERSION needs Java >= $REGISTRY_MIN_JAVA; none found (set JAVA_HOME or install one under /usr/lib/jvm)"
  mkdir -p "$dir"
  echo "$java" >"$dir/java"
  # In-memory storage (H2 in memory): schemas live as long as the process, like the broker's
  # data lives until `down`. C1-only JIT and a serial GC keep its start-up off the broker's
  # cores; a class-data archive, written when it exits, makes the next start faster.
  spawn "$REGISTRY_PID" "$LOGS/registry.log" "$dir" \
    "$java" -Xms64m -Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 "$REGISTRY_MARKER" \
    -XX:+AutoCreateSharedArchive -XX:SharedArchiveFile="$REGISTRY_HOME/registry-$(java_version "$java").jsa" \
    -Dquarkus.http.host="$HOST" -Dquarkus.http.port="$REGISTRY_PORT" \
    -Dquarkus.management.host="$HOST" -Dquarkus.management.port="$REGISTRY_MANAGEMENT_PORT" \
    -Dapicurio.storage.kind=sql -Dapicurio.storage.sql.kind=h2 \
    -Dapicurio.datasource.url="jdbc:h2:mem:registry_db" \
    -Dapicurio.rest.deletion.group.enabled=true -Dapicurio.rest.deletion.artifact.enabled=true \
    -Dapicurio.rest.deletion.artifact-version.enabled=true \
    -jar "$REGISTRY_HOME/quarkus-run.jar"
  say "registry (Apicurio $APICURIO_VERSION) starting (pid $(pid_of "$REGISTRY_PID"), $(java_version "$java"))"
}

registry_ready() { curl -sf -o /dev/null --max-time 2 "http://$HOST:$REGISTRY_MANAGEMENT_PORT/health/ready"; }

registry_api() { curl -sf -o /dev/null --max-time 5 "$SCHEMA_REGISTRY_URL/schemas/types"; }

registry_shared() { [[ -f $REGISTRY_SHARED ]]; }

registry_await() {
  registry_shared && {
    registry_api || die "the shared registry stopped answering at $SCHEMA_REGISTRY_URL"
    return 0
  }
  await registry "$REGISTRY_PID" "$REGISTRY_MARKER" "$LOGS/registry.log" registry_ready
  curl -sf -o /dev/null --max-time 5 "$SCHEMA_REGISTRY_URL/schemas/types" ||
    die "the registry is up but $SCHEMA_REGISTRY_URL does not answer"
}

# "Apicurio Registry (SQL) 3.3.3": name and version from the registry's own system info.
registry_version() {
  local info name version
  info=$(curl -sf --max-time 5 "http://$HOST:$REGISTRY_PORT/apis/registry/v3/system/info") || return 1
  name=$(sed -n 's/.*"name" *: *"\([^"]*\)".*/\1/p' <<<"$info")
  version=$(sed -n 's/.*"version" *: *"\([^"]*\)".*/\1/p' <<<"$info")
  echo "${name:-Apicurio Registry} ${version:-unknown}"
}

# --- Redis ----------------------------------------------------------------------------------

# One RESP command over bash's /dev/tcp: no redis-cli needed. Prints the reply's payload.
redis_call() {
  local fd line len payload
  exec {fd}<>"/dev/tcp/$HOST/$REDIS_PORT" 2>/dev/null || return 1
  printf '%s\r\n' "$*" >&"$fd"
  IFS= read -r -t 2 line <&"$fd" || {
    exec {fd}>&-
    return 1
  }
  line=${line%$'\r'}
  case $line in
  +*) printf '%s\n' "${line#+}" ;;
  \$*)
    len=${line#\$}
    IFS= read -r -d '' -N "$len" -t 2 payload <&"$fd" || true
    printf '%s\n' "$payload"
    ;;
  *)
    exec {fd}>&-
    return 1
    ;;
  esac
  exec {fd}>&-
}

redis_ping() { [[ $(redis_call PING 2>/dev/null) == PONG ]]; }

redis_version() { redis_call INFO server | tr -d '\r' | sed -n 's/^redis_version://p'; }

redis_owned() { [[ -n $(pid_of "$REDIS_PID") ]] && [[ $(cat "/proc/$(pid_of "$REDIS_PID")/comm" 2>/dev/null) == redis-server ]]; }

redis_start() {
  if redis_ping; then
    if redis_owned; then
      say "redis already running (pid $(pid_of "$REDIS_PID"))"
    else
      rm -f "$REDIS_PID"
      say "redis: using the Redis already answering on $HOST:$REDIS_PORT (not managed by the stack)"
    fi
    return 0
  fi
  port_open "$REDIS_PORT" && die "port $REDIS_PORT is open but does not answer PING"
  command -v redis-server >/dev/null ||
    die "no Redis answers on $HOST:$REDIS_PORT and redis-server is not installed (apt-get install redis-server)"
  mkdir -p "$STATE/redis"
  spawn "$REDIS_PID" "$LOGS/redis.log" "$STATE/redis" \
    redis-server --bind "$HOST" --port "$REDIS_PORT" --save "" --appendonly no --dir "$STATE/redis"
  say "redis starting (pid $(pid_of "$REDIS_PID"))"
  local deadline=$(($(now_s) + 20))
  until redis_ping; do
    redis_owned || die "redis-server exited during start-up; log: $LOGS/redis.log"
    (($(now_s) > deadline)) && die "redis-server not answering after 20 s; log: $LOGS/redis.log"
    sleep 0.1
  done
}

# --- Redis Cluster (up --redis-cluster) ----------------------------------------------------

redis_cluster_pid() { echo "$STATE/redis-cluster-$1.pid"; }
redis_cluster_owned() {
  local pid
  pid=$(pid_of "$(redis_cluster_pid "$1")") || return 1
  [[ $(cat "/proc/$pid/comm" 2>/dev/null) == redis-server ]]
}

redis_cluster_start() {
  command -v redis-cli >/dev/null || die "--redis-cluster needs redis-cli (apt-get install redis-tools)"
  local port dir
  for port in "${REDIS_CLUSTER_PORTS[@]}"; do
    redis_cluster_owned "$port" && continue
    port_open "$port" && die "port $port is taken by a process this stack did not start"
    port_open $((port + 10000)) && die "port $((port + 10000)) (cluster bus of $port) is taken"
    dir="$STATE/redis-cluster/$port"
    mkdir -p "$dir"
    spawn "$(redis_cluster_pid "$port")" "$LOGS/redis-cluster-$port.log" "$dir" \
      redis-server --bind "$HOST" --port "$port" --cluster-enabled yes --cluster-config-file nodes.conf \
      --save "" --appendonly no --dir "$dir"
    say "redis cluster node starting on $HOST:$port (pid $(pid_of "$(redis_cluster_pid "$port")"))"
  done
  local deadline=$(($(now_s) + 20))
  for port in "${REDIS_CLUSTER_PORTS[@]}"; do
    until [[ $(redis-cli -h "$HOST" -p "$port" ping 2>/dev/null) == PONG ]]; do
      (($(now_s) > deadline)) && die "redis cluster node $port not answering; log: $LOGS/redis-cluster-$port.log"
      sleep 0.1
    done
  done
  if ! redis-cli -h "$HOST" -p "${REDIS_CLUSTER_PORTS[0]}" cluster info | grep -q cluster_state:ok; then
    local nodes=()
    for port in "${REDIS_CLUSTER_PORTS[@]}"; do nodes+=("$HOST:$port"); done
    redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >>"$LOGS/redis-cluster-create.log" 2>&1 ||
      die "redis-cli --cluster create failed; log: $LOGS/redis-cluster-create.log"
    deadline=$(($(now_s) + 30))
    for port in "${REDIS_CLUSTER_PORTS[@]}"; do
      until redis-cli -h "$HOST" -p "$port" cluster info | grep -q cluster_state:ok; do
        (($(now_s) > deadline)) && die "redis cluster not ok after 30 s"
        sleep 0.2
      done
    done
  fi
  say "redis cluster: ${#REDIS_CLUSTER_PORTS[@]} masters on $HOST:${REDIS_CLUSTER_PORTS[0]}-${REDIS_CLUSTER_PORTS[-1]}, all slots assigned"
}

redis_cluster_stop() {
  local port
  for port in "${REDIS_CLUSTER_PORTS[@]}"; do
    if redis_cluster_owned "$port"; then
      stop "redis cluster node $port" "$(redis_cluster_pid "$port")" redis-server
    else
      rm -f "$(redis_cluster_pid "$port")"
    fi
  done
}

# --- endpoints ------------------------------------------------------------------------------

json_string() {
  local s=${1//\\/\\\\}
  printf '"%s"' "${s//\"/\\\"}"
}

write_endpoints() {
  local registry_v redis_v kafka_java registry_java kafka_v=$KAFKA_VERSION
  kafka_shared && kafka_v="(shared broker, version not known)"
  registry_v=$(registry_version) || registry_v=unknown
  redis_v=$(redis_version) || redis_v=unknown
  kafka_java=shared
  registry_java=shared
  kafka_shared || kafka_java=$(java_version "$(cat "$STATE/kafka/java")")
  registry_shared || registry_java=$(java_version "$(cat "$STATE/registry/java")")
  cat >"$STATE/endpoints.env.tmp" <<EOF
KAFKA_BROKERS=$KAFKA_BROKERS
SCHEMA_REGISTRY_URL=$SCHEMA_REGISTRY_URL
REDIS_URL=$REDIS_URL
EOF
  cat >"$STATE/endpoints.json.tmp" <<EOF
{
  "KAFKA_BROKERS": $(json_string "$KAFKA_BROKERS"),
  "SCHEMA_REGISTRY_URL": $(json_string "$SCHEMA_REGISTRY_URL"),
  "REDIS_URL": $(json_string "$REDIS_URL"),
  "versions": {
    "kafka": $(json_string "$kafka_v"),
    "registry": $(json_string "$registry_v"),
    "redis": $(json_string "$redis_v")
  },
  "java": {
    "kafka": $(json_string "$kafka_java"),
    "registry": $(json_string "$registry_java")
  }
}
EOF
  mv "$STATE/endpoints.env.tmp" "$STATE/endpoints.env"
  mv "$STATE/endpoints.json.tmp" "$STATE/endpoints.json"
}

# --- commands -------------------------------------------------------------------------------

lock() {
  mkdir -p "$STATE" "$LOGS"
  exec 9>"$STATE/.lock"
  flock -w 600 9 || die "another stack.sh holds $STATE/.lock"
}

cmd_up() {
  lock
  local started
  started=$(now_s)
  # Both JVMs start before any waiting, so their start-ups overlap; the registry first, since
  # Kafka's storage format (one more JVM) can run while the registry boots.
  printf 'KAFKA_NODES=%s\nREDIS_CLUSTER=%s\n' "$KAFKA_NODES" "$REDIS_CLUSTER" >"$MODE_FILE"
  registry_start
  kafka_start
  if ((REDIS_CLUSTER)); then redis_cluster_start; else redis_start; fi
  kafka_await
  registry_await
  write_endpoints
  say "up in $(($(now_s) - started)) s; endpoints (also in .stack/endpoints.env and .stack/endpoints.json):"
  sed 's/^/  /' "$STATE/endpoints.env"
}

cmd_down() {
  lock
  local node
  for ((node = 9; node >= 2; node--)); do
    stop "kafka node $node" "$(kafka_pid_of "$node")" "$(kafka_marker_of "$node")"
    rm -rf "$(kafka_dir_of "$node")/data"
  done
  stop kafka "$KAFKA_PID" "$KAFKA_MARKER"
  redis_cluster_stop
  stop registry "$REGISTRY_PID" "$REGISTRY_MARKER"
  kafka_shared && say "kafka: leaving the shared broker on $KAFKA_BROKERS running"
  registry_shared && say "registry: leaving the shared registry at $SCHEMA_REGISTRY_URL running"
  rm -f "$KAFKA_SHARED" "$REGISTRY_SHARED"
  if redis_owned; then
    stop redis "$REDIS_PID" "redis-server"
  else
    rm -f "$REDIS_PID"
  fi
  # Like `docker compose down`: the broker's data goes with it, since the in-memory registry's
  # schema ids would no longer match the records. Logs stay for a post-mortem.
  rm -rf "$STATE/kafka/data" "$STATE/kafka/nodes" "$STATE/kafka-cluster-id" "$STATE/redis" "$STATE/redis-cluster" \
    "$STATE/endpoints.env" "$STATE/endpoints.json" "$MODE_FILE"
  say "down"
}

cmd_status() {
  local rc=0 state
  if owns "$KAFKA_PID" "$KAFKA_MARKER" && kafka_port_open; then
    state="running  pid $(pid_of "$KAFKA_PID"), Kafka $KAFKA_VERSION"
    local node
    for ((node = 2; node <= KAFKA_NODES; node++)); do
      if owns "$(kafka_pid_of "$node")" "$(kafka_marker_of "$node")" && port_open "$(kafka_port_of "$node")"; then
        state+="; node $node pid $(pid_of "$(kafka_pid_of "$node")")"
      else
        state+="; node $node stopped"
        rc=1
      fi
    done
  elif kafka_shared && kafka_port_open; then
    state="running  shared, not managed by this stack"
  else
    state="stopped"
    rc=1
  fi
  printf '%-9s %-42s %s\n' kafka "$KAFKA_BROKERS" "$state"
  if owns "$REGISTRY_PID" "$REGISTRY_MARKER" && registry_ready; then
    state="running  pid $(pid_of "$REGISTRY_PID"), $(registry_version)"
  elif registry_shared && registry_api; then
    state="running  shared, not managed by this stack, $(registry_version)"
  elif owns "$REGISTRY_PID" "$REGISTRY_MARKER"; then
    state="starting or unhealthy  pid $(pid_of "$REGISTRY_PID")"
    rc=1
  else
    state="stopped"
    rc=1
  fi
  printf '%-9s %-42s %s\n' registry "$SCHEMA_REGISTRY_URL" "$state"
  if ((REDIS_CLUSTER)); then
    state="cluster"
    local port
    for port in "${REDIS_CLUSTER_PORTS[@]}"; do
      if redis_cluster_owned "$port"; then
        state+="  $port: pid $(pid_of "$(redis_cluster_pid "$port")")"
      else
        state+="  $port: stopped"
        rc=1
      fi
    done
  elif redis_ping; then
    if redis_owned; then
      state="running  pid $(pid_of "$REDIS_PID"), Redis $(redis_version)"
    else
      state="running  shared, not managed by the stack, Redis $(redis_version)"
    fi
  else
    state="stopped"
    rc=1
  fi
  printf '%-9s %-42s %s\n' redis "$REDIS_URL" "$state"
  return "$rc"
}

case "${1:-}" in
up) cmd_up ;;
down) cmd_down ;;
status) cmd_status ;;
*)
  echo "usage: bash stack/stack.sh up [--brokers N] [--redis-cluster] | down | status" >&2
  exit 2
  ;;
esac
