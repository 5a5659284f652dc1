#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL cluster (D40): initdb under a
# temporary directory, a free port on 127.0.0.1, trust authentication for
# local TCP only; MERIDIAN_TEST_PG names it for the command; the cluster
# and its directory are removed when the command ends, however it ends.
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
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')

stop() {
  "${as_owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap stop EXIT

"${as_owner[@]}" "$bindir/initdb" -D "$dir/data" -A trust -U meridian --no-sync >/dev/null
# fsync off: a test cluster need not survive a power cut, and it makes the suite faster.
"${as_owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -w -l "$dir/log" \
  -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300" start >/dev/null
echo "with-postgres: PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') on 127.0.0.1:$port" >&2

export MERIDIAN_TEST_PG="postgres://meridian@127.0.0.1:$port/postgres"
# For tests that stop and start the database under a running Meridian (faults).
export MERIDIAN_TEST_PG_CTL="${as_owner[*]} $bindir/pg_ctl -D $dir/data -l $dir/log -w"
"$@"
