#!/usr/bin/env bash
# Install code-server 4.100.3 (VS Code 1.100, the last release on Node 20) from npm, offline-safe:
# its @vscode/ripgrep postinstall downloads rg from GitHub, so its download cache is seeded with
# Debian's rg first (FIELD-NOTES). Usage: install-code-server.sh PREFIX
# Needs: build-essential python3-dev libkrb5-dev libsecret-1-dev libxkbfile-dev ripgrep (apt).
set -euo pipefail
prefix="$1"
if [ -x "$prefix/node_modules/.bin/code-server" ]; then
  exit 0
fi
rg_bin="$(command -v rg)"
tmp="$(node -e 'console.log(require("os").tmpdir())')"
stage="$(mktemp -d)"
cp "$rg_bin" "$stage/rg"
for version in 1.15.9 1.15.10 1.15.11 1.15.12 1.15.13 1.15.14; do
  mkdir -p "$tmp/vscode-ripgrep-cache-$version"
  tar czf "$tmp/vscode-ripgrep-cache-$version/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$stage" rg
done
rm -rf "$stage"
mkdir -p "$prefix"
# Its own package.json: without one npm would install into the extension's package above.
[ -f "$prefix/package.json" ] || echo '{"name": "onnx-lint-e2e-code-server", "private": true}' > "$prefix/package.json"
export npm_config_yes=true npm_config_nodedir=/usr npm_config_unsafe_perm=true
cd "$prefix"
npm install --no-audit --no-fund --loglevel=error code-server@4.100.3
