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
root= pid=
cleanup() {
  [ -n "$pid" ] && kill -TERM "$pid" 2> /dev/null
  if [ -n "$root" ]; then umount "$root/proc" 2> /dev/null || true; podman umount "$name" > /dev/null 2>&1 || true; fi
  podman rm -f "$name" > /dev/null 2>&1 || true; podman volume rm -f "$volume" > /dev/null 2>&1 || true
}
trap cleanup EXIT
wait_up() {
  for _ in $(seq 1 240); do curl -sf "http://127.0.0.1:$port/v1/version" && return 0; sleep 0.5; done
  fail "the server in the image did not answer /v1/version"
}
body='{"space":"image:test","nodes":[{"id":"image-1","kind":"claim","statement":"written inside the image"}]}'
write_then_read_after() { # $1: a command that restarts the server
  curl -sf "http://127.0.0.1:$port/v1/memories" -H 'content-type: application/json' -d "$body" | grep -q '"accepted":1' || fail "the write was not accepted"
  "$1"
  wait_up > /dev/null
  curl -sf "http://127.0.0.1:$port/v1/memories/image-1?as_of=2200-01-01" | grep -q 'written inside the image' || fail "the write did not survive a restart"
}

start_container() { podman run -d --name "$name" -p "127.0.0.1:$port:8787" -v "$volume:/data" "$@" "$tag" 2>&1; }
# Without cgroup controllers of its own (a sandbox), a container may still start with cgroups disabled.
if out=$(start_container) || { podman rm -f "$name" > /dev/null 2>&1; out=$(start_container --cgroups=disabled); }; then
  wait_up; echo
  [ "$(podman exec "$name" id -u)" != "0" ] || fail "the server runs as root"
  podman healthcheck run "$name" || fail "the health check failed"
  restart_container() { podman restart "$name" > /dev/null; }
  write_then_read_after restart_container
  echo "test:image: ok (built, ran as $(podman exec "$name" id -un), healthy, data kept across a restart)"
  exit 0
fi
grep -qi 'setrlimit\|RLIMIT_\|operation not permitted\|cgroup' <<< "$out" || fail "podman run: $out"
echo "test:image: podman cannot start a container on this machine:"
echo "  $(tail -1 <<< "$out")"

# Second best, without an OCI runtime: the image's own filesystem (a container's writable copy of it),
# entered with chroot as the image's user, with the image's environment, entrypoint and health check.
# Only HOST changes, to 127.0.0.1: without a network namespace the server shares this machine's.
echo "== instead: the image's filesystem under chroot, as its user"
podman rm -f "$name" > /dev/null 2>&1 || true   # what the refused run left
podman create --name "$name" "$tag" > /dev/null
root=$(podman mount "$name")
mount -t proc proc "$root/proc"
user=$(podman image inspect "$tag" --format '{{.Config.User}}')
mapfile -t envs < <(podman image inspect "$tag" --format '{{range .Config.Env}}{{println .}}{{end}}' | grep .)
json_args() { node -e 'for (const a of JSON.parse(process.argv[1]).filter((a) => a !== "CMD")) process.stdout.write(a + "\0")' "$1"; }
mapfile -d '' -t entry < <(json_args "$(podman image inspect "$tag" --format '{{json .Config.Entrypoint}}')")
mapfile -d '' -t cmd < <(json_args "$(podman image inspect "$tag" --format '{{json .Config.Cmd}}')")
mapfile -d '' -t health < <(json_args "$(podman image inspect "$tag" --format '{{json .Config.Healthcheck.Test}}')")
in_image() { chroot --userspec="$user:$user" "$root" /usr/bin/env -i "${envs[@]}" HOST=127.0.0.1 PORT="$port" "$@"; }
# chroot itself in the background (not a function), so $! is the server's own pid once env execs node.
start_chroot() {
  chroot --userspec="$user:$user" "$root" /usr/bin/env -i "${envs[@]}" HOST=127.0.0.1 PORT="$port" "${entry[@]}" "${cmd[@]}" \
    > "$root/tmp/serve.log" 2>&1 &
  pid=$!
}
start_chroot
wait_up; echo
[ "$(in_image id -u)" != "0" ] || fail "the image's user is root"
in_image "${health[@]}" || fail "the image's health check failed"
restart_chroot() { kill -TERM "$pid"; wait "$pid" || true; start_chroot; }
write_then_read_after restart_chroot
[ "$(stat -c %u "$root/data/graph")" = "$(in_image id -u)" ] || fail "the data volume's files are not the ledger user's"
echo "test:image: built; not run as a container (refused here); its filesystem served as $user under chroot: healthy, data kept across a restart"
