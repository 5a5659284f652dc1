#!/usr/bin/env bash
# Runs a command with throwaway PostgreSQL clusters (D40): initdb under a
# temporary directory, a free port on 127.0.0.1, trust authentication for
# local TCP only; MERIDIAN_TEST_PG names the one for the command, and
# MERIDIAN_TEST_PG_FAULTS (with MERIDIAN_TEST_PG_CTL) one that tests may stop;
# the clusters and their directory are removed when the command ends, however it ends.
#   scripts/with-postgres.sh npm test
# Needs PostgreSQL's server binaries (Debian: apt-get install postgresql-15).
set -euo pipefail

bindir=${PG_BINDIR:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
if [[ -z "$bindir" || ! -x "$bindir/initdb" ]]; then
  echo "with-postgres: no PostgreSQL server binaries (set PG_BINDIR, or apt-get install postgresql-15)" >&2
  exit 2
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/meridian-pg-XXXXXX")
# initdb and postgres refuse to run as root: as root, run them as the postgres user.
as_owner=()
if [[ $(id -u) == 0 ]]; then
  chown postgres "$dir"
  as_owner=(runuser -u postgres --)
fi

stop() {
  for data in "$dir"/*/data; do
    "${as_owner[@]}" "$bindir/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1 || true
  done
  rm -rf "$dir"
}
trap stop EXIT

# A cluster in $dir/$1 on a free port; sets port and ctl (a pg_ctl command line
# for it, to which "-m immediate stop", "start" or "restart" is added).
cluster() {
  local at="$dir/$1"
  "${as_owner[@]}" mkdir "$at"
  port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  "${as_owner[@]}" "$bindir/initdb" -D "$at/data" -A trust -U meridian --no-sync >/dev/null
  # One role signs in by password (the first pg_hba line that matches wins), for the test of a
  # wrong password (D56); every other connection is trusted.
  "${as_owner[@]}" sed -i '1i host all password_user 127.0.0.1/32 scram-sha-256' "$at/data/pg_hba.conf"
  # fsync off: a test cluster need not survive a power cut, and it makes the suite faster.
  local opts="-p $port -k $at -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300"
  ctl="${as_owner[*]} $bindir/pg_ctl -D $at/data -l $at/log -w -o '$opts'"
  eval "$ctl start" >/dev/null
  psql -q -h 127.0.0.1 -p "$port" -U meridian -d postgres -c "CREATE ROLE password_user LOGIN PASSWORD 'the-right-password'" >/dev/null
}

cluster main
echo "with-postgres: PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') on 127.0.0.1:$port" >&2
export MERIDIAN_TEST_PG="postgres://meridian@127.0.0.1:$port/postgres"
# A second cluster for the tests that stop, crash and restart the database under
# a running Meridian (faults), so that the tests running beside them never see it.
cluster faults
export MERIDIAN_TEST_PG_FAULTS="postgres://meridian@127.0.0.1:$port/postgres"
export MERIDIAN_TEST_PG_CTL="$ctl"
"$@"
