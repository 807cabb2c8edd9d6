# Sourced by the benchmark and fuzzing scripts: starts tandem-server on loopback for one run.
#
# start_loopback_server SERVER_BINARY [USER]
#   A fresh data directory, one user with a token, the server on a random port with no rate
#   limit, waited for until /health answers. Sets data, port, base, token and pid; on exit
#   the server is stopped and the directory removed. TANDEM_SERVE_ARGS: more `serve` options.
start_loopback_server() {
  local server=$1 user=${2:-bench}
  data=$(mktemp -d)
  port=$((20000 + RANDOM % 30000))
  base="http://127.0.0.1:$port"
  trap 'kill ${pid:-} 2>/dev/null || true; rm -rf "$data"' EXIT
  "$server" users add "$user" --data-dir "$data" >/dev/null
  token=$("$server" tokens create "$user" --data-dir "$data")
  "$server" serve --data-dir "$data" --port "$port" --log-level error --requests-per-second 0 ${TANDEM_SERVE_ARGS:-} &
  pid=$!
  for _ in $(seq 1 100); do curl -sf "$base/health" >/dev/null && break; sleep 0.1; done
}
