#!/usr/bin/env bash
# Installs Node.js 24 for CI's second run of the suite, from the npm registry's `node-linux-<arch>`
# package (the official binary, no install scripts), into .tools/node-<version>/ (git-ignored;
# reused when present). Prints the folder holding `node`, for PATH:
#
#   PATH="$(bash scripts/node24.sh):$PATH" npm test
#
# SHOAL_NODE24_VERSION picks another 24.x release.
set -euo pipefail

VERSION="${SHOAL_NODE24_VERSION:-24.22.3}"
case "$(uname -m)" in
  x86_64) ARCH=x64 ;;
  aarch64 | arm64) ARCH=arm64 ;;
  *) echo "node24: no node-linux package for $(uname -m)" >&2; exit 1 ;;
esac
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DEST="$ROOT/.tools/node-$VERSION"

if [ ! -x "$DEST/bin/node" ]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  echo "node24: fetching node-linux-$ARCH@$VERSION from the npm registry" >&2
  (cd "$work" && npm pack --silent "node-linux-$ARCH@$VERSION" >/dev/null)
  mkdir -p "$DEST.partial"
  tar -xzf "$work"/node-linux-"$ARCH"-*.tgz -C "$DEST.partial" --strip-components=1 package/bin package/LICENSE
  rm -rf "$DEST"
  mv "$DEST.partial" "$DEST"
fi

actual="$("$DEST/bin/node" --version)"
case "$actual" in
  v24.*) ;;
  *) echo "node24: $DEST/bin/node is $actual, not 24.x" >&2; exit 1 ;;
esac
echo "$DEST/bin"
