#!/usr/bin/env bash
# Installs the system packages the test suite needs (run by `npm test` as its pretest step).
# Today that is the `nats-server` Debian package: bench/load measures NATS JetStream side by side
# with Shoal, and its smoke test starts a real 3-node JetStream cluster on loopback.
set -euo pipefail

have_nats() {
  command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || [ -x /usr/bin/nats-server ]
}

if have_nats; then
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO="sudo -n"
else
  echo "test-deps: nats-server is missing and this user cannot install packages; run: apt-get install nats-server" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
echo "test-deps: installing nats-server (Debian package) for the bench/load smoke test" >&2
if ! $SUDO apt-get install -y -q nats-server >/dev/null 2>&1; then
  $SUDO apt-get update -q >/dev/null 2>&1 || true
  $SUDO apt-get install -y -q nats-server >/dev/null
fi
have_nats || { echo "test-deps: nats-server still missing after apt-get install" >&2; exit 1; }
