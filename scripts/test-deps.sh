#!/usr/bin/env bash
# Installs the system packages the test suite needs (run by `npm test` as its pretest step):
# - `nats-server`: bench/load measures NATS JetStream side by side with Shoal, and its smoke test
#   starts a real 3-node JetStream cluster on loopback;
# - `chromium`: pages (the dashboard, the simulator's timeline) are tested in a real headless
#   browser, driven by playwright-core (test/support/browser.ts); never a downloaded browser;
# - `zsh`, `fish`: the CLI's shell completion scripts are run in the real shells (bash is there).
set -euo pipefail

have_nats() {
  command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || [ -x /usr/bin/nats-server ]
}
have_chromium() {
  [ -x /usr/bin/chromium ]
}
have_shell() {
  command -v "$1" >/dev/null 2>&1
}

missing=()
have_nats || missing+=(nats-server)
have_chromium || missing+=(chromium)
have_shell zsh || missing+=(zsh)
have_shell fish || missing+=(fish)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO="sudo -n"
else
  echo "test-deps: ${missing[*]} missing and this user cannot install packages; run: apt-get install ${missing[*]}" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
echo "test-deps: installing ${missing[*]} (Debian packages)" >&2
if ! $SUDO apt-get install -y -q "${missing[@]}" >/dev/null 2>&1; then
  $SUDO apt-get update -q >/dev/null 2>&1 || true
  $SUDO apt-get install -y -q "${missing[@]}" >/dev/null
fi
have_nats || { echo "test-deps: nats-server still missing after apt-get install" >&2; exit 1; }
have_chromium || { echo "test-deps: chromium still missing after apt-get install" >&2; exit 1; }
for shell in zsh fish; do
  have_shell "$shell" || { echo "test-deps: $shell still missing after apt-get install" >&2; exit 1; }
done
