# Sourced by the test, demo and benchmark scripts: a throwaway PostgreSQL cluster (Debian's
# postgresql package) for one run.
#
# start_postgres [durable]
#   initdb in a new temporary directory (as the `postgres` user when run as root: PostgreSQL
#   refuses to run as root), then pg_ctl on a free loopback port, trust authentication on
#   loopback only. Without `durable`, fsync is off (tests: nothing to keep); with it the
#   cluster commits as a deployment would with synchronous_commit off, comparable to the
#   SQLite storage's synchronous=NORMAL (benchmarks). Sets pg_dir, pg_port and pg_url (a
#   database URL for the `postgres` database; create_postgres_database makes others).
#   Stopped and removed by stop_postgres, which the caller runs on exit.
start_postgres() {
  local bin
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -x "$bin/initdb" ] || { echo "PostgreSQL is not installed (Scripts/install-deps.sh installs it)" >&2; return 1; }
  pg_bin=$bin
  pg_dir=$(mktemp -d /tmp/tandem-pg.XXXXXX)
  pg_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  pg_as=()
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres "$pg_dir"
    pg_as=(runuser -u postgres --)
  fi
  local settings="-c listen_addresses=127.0.0.1 -c port=$pg_port -c unix_socket_directories=$pg_dir -c max_connections=400"
  if [ "${1:-}" = durable ]; then
    settings="$settings -c synchronous_commit=off"
  else
    settings="$settings -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  fi
  "${pg_as[@]}" "$bin/initdb" -D "$pg_dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >"$pg_dir/initdb.log" 2>&1 \
    || { cat "$pg_dir/initdb.log" >&2; return 1; }
  "${pg_as[@]}" "$bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -o "$settings" -w start >/dev/null \
    || { cat "$pg_dir/server.log" >&2; return 1; }
  pg_url="postgres://postgres@127.0.0.1:$pg_port/postgres?sslmode=disable"
}

# create_postgres_database NAME: a new empty database in the cluster; prints its URL.
create_postgres_database() {
  psql -q -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -c "CREATE DATABASE \"$1\"" >/dev/null
  echo "postgres://postgres@127.0.0.1:$pg_port/$1?sslmode=disable"
}

stop_postgres() {
  [ -n "${pg_dir:-}" ] || return 0
  "${pg_as[@]}" "$pg_bin/pg_ctl" -D "$pg_dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$pg_dir"
  pg_dir=
}
