// Round-trip sync of a local folder with a ledger. `pull` is one export call unpacked into the folder.
// `push` sends the folder's nodes and edges back as backfill batches: one POST /v1/memories per batch of
// the bundle (split under the server's row and body limits), each declaring the batch's instant, so every
// row keeps its known_at; rows learned without a batch are grouped per space and knowledge instant (or per
// UTC day with --granularity day, SPEC "Backfill" 6). Rows the target already holds, by the identity rules
// (a node version by id and validity start, an edge by source, target, type and asserted_at), are not
// sent; resolutions are never pushed. Invalidations go last, one call each, backfilled to their known_at
// (their node is then known), unless the target already holds one for that node. A repeated sync
// therefore sends nothing.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { unpackStream } from '../storage/bundle/archive-files.ts';
import { readJsonl, readManifest } from '../storage/bundle/reader.ts';
import type { BundleEdge, BundleInvalidation, BundleNode, Manifest } from '../storage/bundle/rows.ts';
import { formatInstant, nowMicros, parseInstant } from '../storage/time.ts';
import { planPush, type Granularity, type PushGroup } from './sync-plan.ts';

export type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

export interface SyncOptions {
  apiKey?: string | undefined;
  fetch?: Fetch | undefined;
  /** Called as work advances (a bar on stderr by default when it is a terminal). */
  progress?: ((label: string, done: number, total: number | null) => void) | undefined;
}

export class SyncError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly body?: unknown,
  ) {
    super(message);
    this.name = 'SyncError';
  }
}

export function stderrProgress(label: string, done: number, total: number | null): void {
  if (!process.stderr.isTTY) return;
  const width = 30;
  if (total === null) {
    process.stderr.write(`\r${label} ${(done / 1e6).toFixed(1)} MB`);
    return;
  }
  const filled = total > 0 ? Math.min(width, Math.round((done / total) * width)) : width;
  process.stderr.write(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}${done >= total ? '\n' : ''}`);
}

const trimBase = (base: string): string => base.replace(/\/+$/, '');

function headers(opts: SyncOptions, json = false): Record<string, string> {
  const h: Record<string, string> = {};
  if (opts.apiKey) h.authorization = `Bearer ${opts.apiKey}`;
  if (json) h['content-type'] = 'application/json';
  return h;
}

async function failure(res: Response, what: string): Promise<SyncError> {
  const text = await res.text().catch(() => '');
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return new SyncError(`${what}: HTTP ${res.status} ${text.slice(0, 500)}`, res.status, body);
}

export interface PullOptions extends SyncOptions {
  /** Knowledge instant of the export; default: this machine's present instant. */
  asOf?: string | undefined;
  space?: string | undefined;
  category?: string | undefined;
}

/** One export call, unpacked into `dir` (the archive's top directory dropped). */
export async function pull(baseUrl: string, dir: string, opts: PullOptions = {}): Promise<{ manifest: Manifest; bytes: number }> {
  const url = new URL(`${trimBase(baseUrl)}/v1/export`);
  url.searchParams.set('as_of', opts.asOf ?? formatInstant(nowMicros()));
  if (opts.space !== undefined) url.searchParams.set('space', opts.space);
  if (opts.category !== undefined) url.searchParams.set('category', opts.category);
  const res = await (opts.fetch ?? fetch)(url.toString(), { headers: headers(opts) });
  if (res.status !== 200 || !res.body) throw await failure(res, 'export failed');
  await mkdir(dir, { recursive: true });
  let bytes = 0;
  const progress = opts.progress ?? stderrProgress;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      progress('pull', bytes, null);
      done(null, chunk);
    },
  });
  await unpackStream(Readable.fromWeb(res.body as WebReadableStream<Uint8Array>).pipe(counter), dir, 1);
  if (process.stderr.isTTY && !opts.progress) process.stderr.write('\n');
  return { manifest: await readManifest(dir), bytes };
}

export interface PushOptions extends SyncOptions {
  granularity?: Granularity | undefined;
  /** Skip rows the target already holds (one export of the target first). Default true. */
  diff?: boolean | undefined;
  /** Rows per request (the server takes at most 10,000 nodes and 10,000 edges). */
  maxRows?: number | undefined;
  /** Approximate body bytes per request (the server's default limit is 32 MB). */
  maxBytes?: number | undefined;
}

export interface PushReport {
  requests: number;
  batches: number;
  sent: number;
  accepted: number;
  /** Rows not sent because the target already holds them. */
  skipped: number;
  warnings: number;
  /** Invalidations written on the target (not counting those it already held). */
  invalidations: number;
  refused: { space: string; declared_captured_at: string; id: string; kind: string; reason: string }[];
}

interface TargetHoldings {
  /** Node versions by id and validity start. */
  nodes: Set<string>;
  /** Node ids (an edge's end exists when any version does). */
  ids: Set<string>;
  edges: Set<string>;
  /** Node ids the target holds an invalidation of. */
  invalidated: Set<string>;
}

export const nodeKey = (n: Pick<BundleNode, 'id' | 'valid_from'>): string => `${n.id}\u001f${parseInstant(n.valid_from)}`;
export const edgeKey = (e: Pick<BundleEdge, 'source_id' | 'target_id' | 'edge_type' | 'asserted_at'>): string =>
  `${e.source_id}\u001f${e.target_id}\u001f${e.edge_type}\u001f${parseInstant(e.asserted_at)}`;

async function readRows<T>(dir: string, file: string): Promise<T[]> {
  const rows: T[] = [];
  for await (const l of readJsonl(join(dir, file))) {
    if (l.error !== undefined) throw new SyncError(`${file}:${l.line}: not JSON (${l.error})`);
    rows.push(l.value as T);
  }
  return rows;
}

async function holdings(baseUrl: string, space: string | undefined, opts: SyncOptions): Promise<TargetHoldings> {
  const tmp = await mkdtemp(join(tmpdir(), 'ledger-push-'));
  try {
    await pull(baseUrl, tmp, { ...opts, space, progress: () => undefined });
    const nodes = new Set<string>();
    const ids = new Set<string>();
    const edges = new Set<string>();
    for (const n of await readRows<BundleNode>(tmp, 'nodes.jsonl')) {
      nodes.add(nodeKey(n));
      ids.add(n.id);
    }
    for (const e of await readRows<BundleEdge>(tmp, 'edges.jsonl')) edges.add(edgeKey(e));
    const invalidated = new Set((await readRows<BundleInvalidation>(tmp, 'invalidations.jsonl')).map((i) => i.target_id));
    return { nodes, ids, edges, invalidated };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

interface WriteResponse {
  accepted: number;
  refused: { id: string; kind: string; reason: string }[];
  warnings: unknown[];
}

/** How often a batch refused for load is sent again, and the longest Retry-After waited for. */
const SHED_RETRIES = 5;
const SHED_WAIT_MAX_S = 30;

async function send(baseUrl: string, group: PushGroup, nodes: unknown[], edges: unknown[], opts: SyncOptions): Promise<WriteResponse> {
  const body = {
    space: group.space,
    backfill: { declared_captured_at: formatInstant(group.declared), reason: group.reason },
    nodes,
    edges,
  };
  const text = JSON.stringify(body);
  const post = (): Promise<Response> =>
    (opts.fetch ?? fetch)(`${trimBase(baseUrl)}/v1/memories`, { method: 'POST', headers: headers(opts, true), body: text });
  let res: Response;
  try {
    res = await post();
  } catch {
    // A kept-alive connection the server closed while the client was planning fails the POST before it
    // is read. Writes are idempotent by content, so sending the same body again is safe.
    res = await post();
  }
  // A server shedding load (503, or 429 past this key's share) says when to come back; writes are
  // idempotent by content, so the same batch is sent again after that, a bounded number of times.
  for (let attempt = 1; (res.status === 503 || res.status === 429) && attempt <= SHED_RETRIES; attempt++) {
    const seconds = Math.min(Math.max(Number(res.headers.get('retry-after')) || 1, 1), SHED_WAIT_MAX_S);
    await res.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    res = await post();
  }
  if (res.status !== 200)
    throw await failure(res, `write of a batch of space ${group.space} declared at ${formatInstant(group.declared)} failed`);
  return (await res.json()) as WriteResponse;
}

/** Pushes the bundle folder `dir` into the ledger at `baseUrl`. */
export async function push(dir: string, baseUrl: string, opts: PushOptions = {}): Promise<PushReport> {
  const manifest = await readManifest(dir);
  const nodes = await readRows<BundleNode>(dir, 'nodes.jsonl');
  const edges = await readRows<BundleEdge>(dir, 'edges.jsonl');
  const held = opts.diff === false ? null : await holdings(baseUrl, manifest.namespace.space, opts);
  const plan = planPush(manifest, nodes, edges, {
    granularity: opts.granularity ?? 'exact',
    maxRows: opts.maxRows ?? 10_000,
    maxBytes: opts.maxBytes ?? 8 * 1024 * 1024,
    holds: held
      ? { node: (n) => held.nodes.has(nodeKey(n)), edge: (e) => held.edges.has(edgeKey(e)), nodeId: (id) => held.ids.has(id) }
      : undefined,
  });
  const report: PushReport = {
    requests: 0,
    batches: plan.batches,
    sent: 0,
    accepted: 0,
    skipped: plan.skipped,
    warnings: 0,
    invalidations: 0,
    refused: [],
  };
  const progress = opts.progress ?? stderrProgress;
  progress('push', 0, plan.total);
  for (const req of plan.requests) {
    const r = await send(baseUrl, req.group, req.nodes, req.edges, opts);
    report.requests++;
    report.sent += req.nodes.length + req.edges.length;
    report.accepted += r.accepted;
    report.warnings += r.warnings.length;
    for (const x of r.refused)
      report.refused.push({ space: req.group.space, declared_captured_at: formatInstant(req.group.declared), ...x });
    progress('push', report.sent, plan.total);
  }
  for (const inv of await readRows<BundleInvalidation>(dir, 'invalidations.jsonl')) {
    if (held?.invalidated.has(inv.target_id)) continue;
    if (await sendInvalidation(baseUrl, inv, opts)) report.invalidations++;
    report.requests++;
  }
  return report;
}

/** Writes one invalidation with its known_at as the declared instant; false when the target already held one. */
async function sendInvalidation(baseUrl: string, inv: BundleInvalidation, opts: SyncOptions): Promise<boolean> {
  const body = JSON.stringify({
    reason: inv.reason,
    ...(inv.by === null ? {} : { by: inv.by }),
    backfill: { declared_captured_at: inv.known_at, reason: `sync: invalidation known at ${inv.known_at}` },
  });
  const url = `${trimBase(baseUrl)}/v1/memories/${encodeURIComponent(inv.target_id)}/invalidate`;
  const res = await (opts.fetch ?? fetch)(url, { method: 'POST', headers: headers(opts, true), body });
  if (res.status !== 200) throw await failure(res, `invalidation of ${inv.target_id} failed`);
  const r = (await res.json()) as { warnings?: unknown[] };
  return (r.warnings ?? []).length === 0;
}
