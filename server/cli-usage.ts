// Every help text of the `memory-ledger` command, in a module that imports nothing: `--help` and
// `--version` must answer without loading an engine (Kuzu and LanceDB take most of a start-up).

export const MAIN_USAGE = `usage: memory-ledger <command> [options]
  serve                 run the HTTP server (REST at /v1, MCP at /mcp) on SVC_DATA_DIR
  stdio                 serve the MCP tools over stdin/stdout (open, tenant SVC_TENANT) on SVC_DATA_DIR
  bundle FILE ...       read an export bundle offline: list | get ID | why ID | verify
  pull BASE_URL DIR     export a ledger into a folder (--as-of, --space); key from SVC_API_KEY
  push DIR BASE_URL     write a pulled folder into a ledger, batch by batch; key from SVC_API_KEY
  placement-agent       keep HAProxy's routing maps in step with the placements in etcd (docs/cluster.md)
  move TENANT --to S    move a tenant's rows to server S of the cluster and re-point its placement
  --version             print the version
  <command> --help      help for one command`;

export const SERVE_USAGE = `usage: memory-ledger serve
  runs the HTTP server: REST at /v1, MCP at /mcp and /mcp/<app_label>/<space> (also /apps/<app_label>/<space>/mcp)
  configured by the environment:
  PORT, HOST            where it listens (default 8787, 127.0.0.1; 0.0.0.0 in a container)
  SVC_DATA_DIR          the folder holding all durable state (default ./data)
  SVC_API_KEYS          key=tenant pairs; when set every route but GET /v1/version needs a key
  SVC_API_KEYS_FILE     a JSON object {"key": "tenant"}, merged with SVC_API_KEYS
  SVC_TENANT            the tenant of an open server (default local)
  SVC_EMBEDDER, SVC_EXTRACTOR   local (default) or openai:<model> with OPENAI_BASE_URL, OPENAI_API_KEY
  SVC_SERVER_ID         this server's name in a cluster, sent in the x-ledger-server response header
  SVC_ETCD              etcd URLs (e.g. http://127.0.0.1:2379): serve only the tenants placed here (docs/cluster.md)
  SVC_ADVERTISE_URL     the base URL other cluster members reach this server at, registered in etcd as
                        /servers/<SVC_SERVER_ID> (default http://HOST:PORT)
  SVC_OPERATOR_KEY      the operator's key for /admin routes (tenant export and import, moves); unset: no /admin routes
  SVC_ETCD_STALE_MS     how long to keep the last placements while etcd is unreachable (default 15000), then 503
  SIGTERM or SIGINT stops it after queued writes commit.`;

export const STDIO_USAGE = `usage: memory-ledger stdio
  serves the MCP tools over stdin/stdout for one local agent (open, tenant SVC_TENANT, default local)
  on SVC_DATA_DIR (default ./data; a folder no serve process holds); logs go to stderr.
  Closing stdin stops it after queued writes commit.`;

export const BUNDLE_USAGE = `usage: memory-ledger bundle FILE <list | get ID | why ID | verify> [options]
  FILE               an export .tar.gz, or a folder it was unpacked into (memory-ledger pull)
  --as-of T          knowledge instant (default: the bundle's exported_as_of; a date means its end in UTC)
  --valid-at T       content instant
  --space S          one space
  --kind K           list: one kind
  --category C       list: one category
  --limit N          list: page size (default: every row)
  --cursor C         list: next_cursor of the previous page
  --depth N          why: hops (default 3)
verify exits 1 when the bundle breaks an invariant; every violation is listed with its row.`;
export const SYNC_USAGE = `usage: memory-ledger pull BASE_URL DIR [--as-of T] [--space S] [--category C]
       memory-ledger push DIR BASE_URL [--granularity exact|day] [--no-diff]
  pull: one export call (as of T, default now), unpacked into DIR
  push: one POST /v1/memories per backfill batch of DIR, declaring the batch's instant; rows the target
        already holds are not sent (--no-diff sends everything and lets the server answer already_remembered)
  the API key is read from SVC_API_KEY`;

export const AGENT_USAGE = `usage: memory-ledger placement-agent [--etcd URLS] [--socket PATH] [--maps DIR] [--once]
  keeps HAProxy's keys.map (key hash -> server) and spaces.map (svc: space -> server) in step with etcd's
  /keys/, /placement/ and /spaces/, through HAProxy's admin socket (no reload), and rewrites the files
  --etcd URLS     etcd client URLs, comma-separated (default: SVC_ETCD)
  --socket PATH   HAProxy's admin socket (default: LEDGER_ADMIN_SOCKET)
  --maps DIR      the folder of keys.map and spaces.map as haproxy.cfg names it (default: LEDGER_MAPS)
  --once          sync once and exit (0: HAProxy matches etcd)`;

export const MOVE_USAGE = `usage: memory-ledger move TENANT --to SERVER [--page-rows N] [--tail-rows N] [--keep-source]
       memory-ledger move --abort TENANT
  copies TENANT's rows verbatim to SERVER while it stays writable, freezes it (503 + Retry-After), copies
  the tail, compares digests, then re-points /placement/TENANT to SERVER at epoch+1 in one etcd transaction;
  any failure or interruption before that leaves the tenant on its source, writable, the target's copy dropped
  --abort          recover after a mover died: unfreeze TENANT and drop its copies on servers not serving it
  --page-rows N    rows per page (default 2000)
  --tail-rows N    freeze once a copy pass moved at most N rows (default 1000)
  --keep-source    keep the source's copy after the move (default: dropped)
  --etcd URLS      etcd client URLs (default: SVC_ETCD); servers are found under /servers/
  needs SVC_OPERATOR_KEY, the servers' operator key (docs/cluster.md)`;
