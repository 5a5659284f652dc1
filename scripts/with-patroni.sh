#!/usr/bin/env bash
# Runs a command beside a throwaway PostgreSQL cluster with automatic failover
# (D70): Debian's etcd and three PostgreSQL nodes under Debian's Patroni, in
# synchronous mode (ttl 10, loop_wait 2), on free ports of 127.0.0.1, under a
# temporary directory; everything it started is stopped and the directory
# removed when the command ends, however it ends.
#   scripts/with-patroni.sh npx vitest run test/scale/failover.test.ts
#   WITH_PATRONI_SYNC=off scripts/with-patroni.sh ...   (asynchronous replication)
#   WITH_PATRONI_LOGS=DIR scripts/with-patroni.sh ...   (keeps Patroni's and PostgreSQL's logs in DIR)
# The command gets, in its environment:
#   MERIDIAN_DB       the three nodes, target_session_attrs=read-write (the primary)
#   MERIDIAN_DB_READ  the three nodes, target_session_attrs=prefer-standby
#   PATRONI_URLS      each node's Patroni REST address, space-separated
#   PATRONI_DIR       the directory: node<N>/patroni.yml (also for patronictl -c),
#                     node<N>/patroni.pid, node<N>/data/postmaster.pid, node<N>/start
#                     (starts that node's Patroni again after a test killed it)
#   MERIDIAN_TEST_PG  MERIDIAN_DB, for the suite's PostgreSQL tests (test/helpers/postgres.ts)
# Needs: apt-get install postgresql-15 patroni etcd-server etcd-client.
set -euo pipefail

bindir=${PG_BINDIR:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
for need in patroni etcd; do
  if ! command -v "$need" >/dev/null; then
    echo "with-patroni: no $need (apt-get install patroni etcd-server etcd-client)" >&2
    exit 2
  fi
done
if [[ -z "$bindir" || ! -x "$bindir/initdb" ]]; then
  echo "with-patroni: no PostgreSQL server binaries (set PG_BINDIR, or apt-get install postgresql-15)" >&2
  exit 2
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/meridian-patroni-XXXXXX")
# PostgreSQL refuses to run as root: as root, everything runs as the postgres user.
as_owner=()
if [[ $(id -u) == 0 ]]; then
  chown postgres "$dir"
  as_owner=(runuser -u postgres --)
fi

pids_of() { # the pid files under $dir that name a live process
  for f in "$@"; do [[ -s "$f" ]] && kill -0 "$(head -1 "$f")" 2>/dev/null && head -1 "$f"; done
  return 0
}
stop() {
  set +e
  # Patroni first (a TERM stops its PostgreSQL), then whatever outlived it.
  local p
  p=$(pids_of "$dir"/node*/patroni.pid)
  [[ -n "$p" ]] && kill -TERM $p 2>/dev/null
  for _ in $(seq 50); do
    [[ -z "$(pids_of "$dir"/node*/patroni.pid)" ]] && break
    sleep 0.1
  done
  p=$(pids_of "$dir"/node*/patroni.pid)
  [[ -n "$p" ]] && kill -KILL $p 2>/dev/null
  for data in "$dir"/node*/data; do
    [[ -f "$data/postmaster.pid" ]] && "${as_owner[@]}" "$bindir/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1
  done
  p=$(pids_of "$dir"/etcd.pid)
  [[ -n "$p" ]] && kill -TERM $p 2>/dev/null && sleep 0.3 && kill -KILL $p 2>/dev/null
  # WITH_PATRONI_LOGS=DIR: keep the nodes' and etcd's logs there (a failed run's evidence).
  if [[ -n "${WITH_PATRONI_LOGS:-}" ]]; then
    mkdir -p "$WITH_PATRONI_LOGS"
    cp "$dir"/etcd.log "$WITH_PATRONI_LOGS"/ 2>/dev/null
    for n in "$dir"/node*; do
      mkdir -p "$WITH_PATRONI_LOGS/${n##*/}"
      cp "$n"/patroni.log "$WITH_PATRONI_LOGS/${n##*/}"/ 2>/dev/null
      cp -r "$n"/data/log "$WITH_PATRONI_LOGS/${n##*/}"/ 2>/dev/null
    done
  fi
  rm -rf "$dir"
}
trap stop EXIT
trap 'exit 130' INT TERM

free_port() {
  node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# etcd (v3 API; Patroni's etcd3 client talks to its JSON gateway).
etcd_port=$(free_port)
peer_port=$(free_port)
"${as_owner[@]}" mkdir "$dir/etcd"
"${as_owner[@]}" bash -c "exec etcd --name meridian --data-dir '$dir/etcd' \
  --listen-client-urls http://127.0.0.1:$etcd_port --advertise-client-urls http://127.0.0.1:$etcd_port \
  --listen-peer-urls http://127.0.0.1:$peer_port --initial-advertise-peer-urls http://127.0.0.1:$peer_port \
  --initial-cluster meridian=http://127.0.0.1:$peer_port >'$dir/etcd.log' 2>&1 & echo \$! >'$dir/etcd.pid'"
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$etcd_port/health" >/dev/null && break
  sleep 0.1
done
curl -sf "http://127.0.0.1:$etcd_port/health" >/dev/null || {
  echo "with-patroni: etcd did not start:" >&2
  tail -20 "$dir/etcd.log" >&2
  exit 1
}

# WITH_PATRONI_SYNC=off: asynchronous replication, to measure what a failover then loses.
sync_mode=true
[[ "${WITH_PATRONI_SYNC:-on}" == off ]] && sync_mode=false
hosts=()
rest=()
for n in 1 2 3; do
  at="$dir/node$n"
  pg_port=$(free_port)
  rest_port=$(free_port)
  hosts+=("127.0.0.1:$pg_port")
  rest+=("http://127.0.0.1:$rest_port")
  "${as_owner[@]}" mkdir -m 0700 "$at"
  # Synchronous mode: a commit returns once a standby has it (synchronous_commit on), so an
  # acknowledged write survives the primary's loss; Patroni promotes only the synchronous standby.
  # loop_wait + 2 x retry_timeout must not exceed ttl.
  "${as_owner[@]}" tee "$at/patroni.yml" >/dev/null <<EOF
scope: meridian
name: node$n
log:
  level: WARNING
restapi:
  listen: 127.0.0.1:$rest_port
  connect_address: 127.0.0.1:$rest_port
etcd3:
  hosts: 127.0.0.1:$etcd_port
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 2
    retry_timeout: 4
    maximum_lag_on_failover: 1048576
    synchronous_mode: $sync_mode
    synchronous_mode_strict: false
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        wal_level: replica
        hot_standby: "on"
        wal_log_hints: "on"
        max_wal_senders: 10
        max_replication_slots: 10
        max_connections: 300
        synchronous_commit: "on"
        hot_standby_feedback: "on"
        fsync: "off"
        # The server's own log beside its data (kept by WITH_PATRONI_LOGS).
        logging_collector: "on"
        log_directory: log
        log_line_prefix: "%m [%p] %a "
  initdb:
    - encoding: UTF8
    - no-sync
  pg_hba:
    - host replication replicator 127.0.0.1/32 trust
    - host all password_user 127.0.0.1/32 scram-sha-256
    - host all all 127.0.0.1/32 trust
    - local all all trust
postgresql:
  listen: 127.0.0.1:$pg_port
  connect_address: 127.0.0.1:$pg_port
  data_dir: $at/data
  bin_dir: $bindir
  pgpass: $at/pgpass
  authentication:
    superuser:
      username: meridian
      password: meridian
    replication:
      username: replicator
      password: replicator
    rewind:
      username: meridian
      password: meridian
  parameters:
    unix_socket_directories: $at
tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
EOF
  # Starts (or starts again) this node's Patroni in the background, its pid in patroni.pid.
  "${as_owner[@]}" tee "$at/start" >/dev/null <<EOF
#!/usr/bin/env bash
${as_owner[*]} bash -c "exec patroni '$at/patroni.yml' >>'$at/patroni.log' 2>&1 & echo \\\$! >'$at/patroni.pid'"
EOF
  chmod +x "$at/start"
done

# The first node bootstraps (initdb) alone; the others then clone it from the leader.
"$dir/node1/start"
leader_up() { curl -sf "${rest[0]}/primary" >/dev/null; }
for _ in $(seq 300); do leader_up && break; sleep 0.1; done
leader_up || {
  echo "with-patroni: the first node did not become the primary:" >&2
  tail -30 "$dir/node1/patroni.log" >&2
  exit 1
}
"$dir/node2/start"
"$dir/node3/start"

multi=$(IFS=,; echo "${hosts[*]}")
export MERIDIAN_DB="postgres://meridian@$multi/postgres?target_session_attrs=read-write"
export MERIDIAN_DB_READ="postgres://meridian@$multi/postgres?target_session_attrs=prefer-standby"
export PATRONI_URLS="${rest[*]}"
export PATRONI_DIR="$dir"
export PATRONICTL_CONFIG_FILE="$dir/node1/patroni.yml"
export MERIDIAN_TEST_PG="$MERIDIAN_DB"

# Ready: a leader, two running replicas, one of them the synchronous standby (in synchronous mode).
ready() {
  curl -sf "${rest[0]}/cluster" | node -e '
    let s = ""; process.stdin.on("data", (c) => (s += c)).on("end", () => {
      const m = JSON.parse(s).members;
      const sync = process.argv[1] === "true";
      const ok = m.length === 3 && m.filter((x) => x.role === "leader").length === 1 &&
        m.filter((x) => x.role === "sync_standby" && x.state === "running").length === (sync ? 1 : 0) &&
        m.filter((x) => x.role === "replica" && x.state === "running").length === (sync ? 1 : 2);
      process.exit(ok ? 0 : 1);
    });' "$sync_mode"
}
for _ in $(seq 600); do ready && break; sleep 0.2; done
ready || {
  echo "with-patroni: the cluster did not come up with a synchronous standby:" >&2
  curl -s "${rest[0]}/cluster" >&2 || true
  tail -20 "$dir"/node*/patroni.log >&2
  exit 1
}
psql -q -h 127.0.0.1 -p "${hosts[0]#*:}" -U meridian -d postgres \
  -c "CREATE ROLE password_user LOGIN PASSWORD 'the-right-password'" >/dev/null

echo "with-patroni: Patroni $(patroni --version | awk '{print $2}'), PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') on ${hosts[*]}, REST ${rest[*]}" >&2
"$@"
