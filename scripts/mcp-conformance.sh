#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, a dev dependency; Node >= 22)
# against the real server: `memory-ledger serve` on a loopback port over a fresh temporary data folder.
# Only the scenarios that apply to a server offering tools and nothing else are run: the suite's other
# server scenarios drive its own test tools (test_simple_text, test_error_handling, ...), resources,
# prompts, logging, completion, sampling, elicitation or SSE streams, none of which this server offers
# (`npx conformance list` prints them all). Nothing leaves the machine: the suite talks to the local URL.
# The last line is `mcp conformance: N passed, M failed (scenarios)`; the exit status is non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
SCENARIOS=${MCP_CONFORMANCE_SCENARIOS:-"server-initialize ping tools-list dns-rebinding-protection"}
data=$(mktemp -d)
log=$(mktemp)
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
SVC_DATA_DIR="$data" HOST=127.0.0.1 PORT="$port" node bin/memory-ledger.mjs serve >"$log" 2>&1 &
pid=$!
cleanup() {
  kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$data" "$log"
}
trap cleanup EXIT
for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$port/v1/version" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { cat "$log"; echo "mcp conformance: 0 passed, 1 failed (the server did not start)"; exit 1; }
  sleep 0.5
done
passed=0 failed=0 names=()
for scenario in $SCENARIOS; do
  out=$(node node_modules/@modelcontextprotocol/conformance/dist/index.js server --url "http://127.0.0.1:$port/mcp" --scenario "$scenario" 2>&1)
  status=$?
  line=$(grep -E '^Passed: [0-9]+/[0-9]+' <<<"$out" | tail -1)
  if [ $status -eq 0 ] && [[ "$line" =~ ^Passed:\ ([0-9]+)/([0-9]+),\ 0\ failed ]] && [ "${BASH_REMATCH[2]}" -gt 0 ]; then
    passed=$((passed + 1)); echo "ok   $scenario: $line"
  else
    failed=$((failed + 1)); echo "FAIL $scenario: ${line:-no result}"; echo "$out" | tail -40
  fi
  names+=("$scenario")
done
echo "mcp conformance: $passed passed, $failed failed (${names[*]})"
[ "$failed" -eq 0 ]
