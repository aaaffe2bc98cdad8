#!/usr/bin/env bash
# `npm run test:image` (not part of npm test): builds the container image with podman and, where the
# machine lets podman start containers, runs it: /v1/version answers, the health check passes, the
# server is not root, and a write survives a restart in the data volume.
# BASE: IMAGE_BASE if set, else a base made by scripts/image-base.sh from Debian packages (no registry).
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
fail() { echo "test:image: $*" >&2; exit 1; }
command -v podman > /dev/null || fail "podman not found (Debian: apt-get install podman debootstrap)"

base=${IMAGE_BASE:-}
if [ -z "$base" ]; then
  base="localhost/memory-ledger-base:bookworm-node24"
  podman image exists "$base" || base=$(bash scripts/image-base.sh 24)
fi
tag=localhost/memory-ledger:test
echo "== build on $base"
start=$(date +%s)
# Host networking for the build: npm ci inside it reaches the npm registry as this machine does.
# Chroot isolation by default: RUN steps then need no OCI runtime, which a sandbox without its own
# cgroup controllers refuses ("cgroups in hybrid mode not supported"). IMAGE_ISOLATION=oci overrides.
# The CAs this machine trusts (here they include a TLS-inspecting proxy's) go in as a build secret, never
# into a layer: IMAGE_CA_FILE, else npm's cafile, else the system bundle.
secret=()
cafile=${IMAGE_CA_FILE:-$(npm config get cafile 2>/dev/null || true)}
{ [ -n "$cafile" ] && [ "$cafile" != "null" ]; } || cafile=/etc/ssl/certs/ca-certificates.crt
if [ -f "$cafile" ]; then secret=(--secret "id=npm_ca,src=$cafile"); fi
podman build --format docker --isolation "${IMAGE_ISOLATION:-chroot}" --network host "${secret[@]}" \
  --build-arg "BASE=$base" -t "$tag" .
echo "== built $tag in $(( $(date +%s) - start )) s, $(podman image inspect "$tag" --format '{{.Size}}') bytes"
[ "$(podman image inspect "$tag" --format '{{.Config.User}}')" = "ledger" ] || fail "the image does not run as the ledger user"
podman image inspect "$tag" --format '{{json .Config.Healthcheck}}' | grep -q '/v1/version' || fail "no HEALTHCHECK on /v1/version"

name=memory-ledger-test-$$
volume=memory-ledger-test-$$
port=$(node -e "const s=require('node:net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
cleanup() { podman rm -f "$name" > /dev/null 2>&1 || true; podman volume rm -f "$volume" > /dev/null 2>&1 || true; }
trap cleanup EXIT
start_container() { podman run -d --name "$name" -p "127.0.0.1:$port:8787" -v "$volume:/data" "$@" "$tag" 2>&1; }
# Without cgroup controllers of its own (a sandbox), a container may still start with cgroups disabled.
if ! out=$(start_container) && ! { podman rm -f "$name" > /dev/null 2>&1; out2=$(start_container --cgroups=disabled); }; then
  out="$out
$out2"
  if grep -qi 'setrlimit\|RLIMIT_NPROC\|operation not permitted\|cgroup' <<< "$out"; then
    echo "test:image: built; this machine does not let podman start a container, so it was not run:"
    echo "  $out" | tail -3
    exit 0
  fi
  fail "podman run: $out"
fi

wait_up() {
  for _ in $(seq 1 240); do curl -sf "http://127.0.0.1:$port/v1/version" && return 0; sleep 0.5; done
  podman logs "$name" | tail -20; fail "the container did not answer /v1/version"
}
wait_up; echo
[ "$(podman exec "$name" id -u)" != "0" ] || fail "the server runs as root"
podman healthcheck run "$name" || fail "the health check failed"
body='{"space":"image:test","nodes":[{"id":"image-1","kind":"claim","statement":"written inside the container"}]}'
curl -sf "http://127.0.0.1:$port/v1/memories" -H 'content-type: application/json' -d "$body" | grep -q '"accepted":1' || fail "the write was not accepted"
podman restart "$name" > /dev/null
wait_up > /dev/null
curl -sf "http://127.0.0.1:$port/v1/memories/image-1?as_of=2200-01-01" | grep -q 'written inside the container' || fail "the write did not survive a restart"
echo "test:image: ok (built, ran as $(podman exec "$name" id -un), healthy, data kept across a restart)"
