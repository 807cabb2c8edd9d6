# Sourced by the test, demo and benchmark scripts: a throwaway PostgreSQL cluster (Debian's
# postgresql package) for one run. Run as a command, for tests that need a cluster of their
# own (to restart it under load): `Scripts/postgres.sh start` prints the cluster's directory
# and URL; `Scripts/postgres.sh stop DIR` stops and removes it; `restart DIR` restarts it
# (fast shutdown), `halt DIR` and `resume DIR` stop and start it, `kill DIR` kills it with -9
# and starts it again (crash recovery).
#
# start_postgres [durable]
#   initdb in a new temporary directory (as the `postgres` user when run as root: PostgreSQL
#   refuses to run as root), then pg_ctl on a free loopback port, trust authentication on
#   loopback only, TLS on with a self-signed certificate (when openssl is there). Without
#   `durable`, fsync is off (tests: no machine crash to survive; a
#   crash of PostgreSQL itself still loses no acknowledged commit); with it the cluster runs
#   with PostgreSQL's durable defaults (benchmarks). synchronous_commit stays on in both:
#   with it off, a kill -9 of PostgreSQL loses commits it already acknowledged (the test that
#   kills it found a push answered 200 and absent afterwards). Sets pg_dir, pg_port and pg_url
#   (a database URL for the `postgres` database; create_postgres_database makes others).
#   Stopped and removed by stop_postgres, which the caller runs on exit.
# pg_detached COMMAND…: runs COMMAND with no descriptor above 2 open, so the server it starts
# keeps none of its caller's (Foundation's Process hands a child a descriptor whose closing
# tells it the child ended: a server keeping it makes the caller wait forever).
pg_detached() {
  (
    for fd in /proc/self/fd/*; do
      n=${fd##*/}
      [ "$n" -gt 2 ] && eval "exec $n>&-" 2>/dev/null
    done
    "$@"
  )
}

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
  settings="$settings ${TANDEM_PG_SETTINGS:-}"  # extra -c settings (profiling: -c shared_preload_libraries=pg_stat_statements)
  if [ "${1:-}" != durable ]; then
    settings="$settings -c fsync=off -c full_page_writes=off"
  fi
  "${pg_as[@]}" "$bin/initdb" -D "$pg_dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >"$pg_dir/initdb.log" 2>&1 \
    || { cat "$pg_dir/initdb.log" >&2; return 1; }
  # TLS with a self-signed certificate, so URLs with sslmode=require are tried for real.
  if command -v openssl >/dev/null 2>&1 \
    && openssl req -new -x509 -days 2 -nodes -subj "/CN=127.0.0.1" -keyout "$pg_dir/data/server.key" \
      -out "$pg_dir/data/server.crt" >/dev/null 2>&1; then
    chmod 600 "$pg_dir/data/server.key"
    [ ${#pg_as[@]} -eq 0 ] || chown postgres "$pg_dir/data/server.key" "$pg_dir/data/server.crt"
    settings="$settings -c ssl=on"
  fi
  echo "$settings" >"$pg_dir/settings"
  pg_detached "${pg_as[@]}" "$bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -o "$settings" -w start >/dev/null \
    || { cat "$pg_dir/server.log" >&2; return 1; }
  pg_url="postgres://postgres@127.0.0.1:$pg_port/postgres?sslmode=disable"
}

# pg_in DIR: sets pg_dir, pg_bin and pg_as for the cluster in DIR.
pg_in() {
  pg_dir=$1
  pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  pg_as=()
  [ "$(id -u)" -eq 0 ] && pg_as=(runuser -u postgres --)
  return 0
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

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  case "${1:-}" in
    start) start_postgres "${2:-}"; echo "$pg_dir $pg_url" ;;
    stop) pg_in "$2"; stop_postgres ;;
    restart) pg_in "$2"; pg_detached "${pg_as[@]}" "$pg_bin/pg_ctl" -D "$pg_dir/data" -m fast -w restart >/dev/null ;;
    halt) pg_in "$2"; "${pg_as[@]}" "$pg_bin/pg_ctl" -D "$pg_dir/data" -m fast -w stop >/dev/null ;;
    resume) pg_in "$2"; pg_detached "${pg_as[@]}" "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -o "$(cat "$pg_dir/settings")" -w start >/dev/null ;;
    kill)
      pg_in "$2"
      kill -9 "$(head -1 "$pg_dir/data/postmaster.pid")"
      # The killed server's backends notice and exit; it starts again once they have gone.
      for _ in $(seq 1 50); do
        pg_detached "${pg_as[@]}" "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -o "$(cat "$pg_dir/settings")" -w start >/dev/null 2>&1 && break
        sleep 0.2
      done ;;
    *) echo "usage: $0 start [durable] | stop DIR | restart DIR | halt DIR | resume DIR | kill DIR" >&2; exit 2 ;;
  esac
fi
