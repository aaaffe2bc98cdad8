// Stages an export bundle in a folder: one directory holding manifest.json and three JSONL files, written
// as streams from the tenant's in-memory view, so the bundle never exists as one string. The scope of an
// export: rows known at as_of (validity is not filtered), nodes of the space and category when given, the
// edges whose two ends were exported, and the verdicts on exported nodes.
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import { join } from 'node:path';
import type { TenantView } from '../read/tenant-view.ts';
import { compactInstant, formatInstant, type Micros } from '../time.ts';
import type { Declaration, NodeVersion, Verdict } from '../types.ts';
import {
  bundleBatch,
  bundleFact,
  bundleInvalidation,
  bundleResolution,
  edgeLine,
  InstantFormatter,
  nodeLine,
  type BatchLookup,
  type Manifest,
} from './rows.ts';

export interface ExportScope {
  asOf: Micros;
  space?: string | undefined;
  category?: string | undefined;
}

export interface StagedBundle {
  /** The directory holding the four files, inside `root`. */
  dir: string;
  stem: string;
  manifest: Manifest;
}

const safe = (text: string): string =>
  text
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._]+/, '')
    .slice(0, 80) || '_';

/** `ledger-<tenant>[-<space>]-<as_of compact>`, with characters a file system may refuse replaced. */
export function bundleStem(tenant: string, scope: ExportScope): string {
  return `ledger-${safe(tenant)}${scope.space === undefined ? '' : `-${safe(scope.space)}`}-${compactInstant(scope.asOf)}`;
}

/** Writes lines through a stream in chunks, waiting for it to drain, so memory holds one chunk at a time. */
class JsonlFile {
  readonly #stream: WriteStream;
  #chunk: string[] = [];
  #size = 0;
  count = 0;

  constructor(path: string) {
    this.#stream = createWriteStream(path, { encoding: 'utf8' });
  }

  /** Adds one line (ending in a newline); true when the chunk is full and `flush()` is due. */
  push(line: string): boolean {
    this.#chunk.push(line);
    this.#size += line.length;
    this.count++;
    return this.#size >= 256 * 1024;
  }

  async flush(): Promise<void> {
    if (this.#chunk.length === 0) return;
    const text = this.#chunk.join('');
    this.#chunk = [];
    this.#size = 0;
    if (!this.#stream.write(text)) await once(this.#stream, 'drain');
  }

  async close(): Promise<void> {
    await this.flush();
    this.#stream.end();
    await once(this.#stream, 'finish');
  }
}

/** The fact declarations in force at `asOf`: the latest of each key declared by then. */
export function factsInForce(declarations: readonly Declaration[], asOf: Micros): Declaration[] {
  const latest = new Map<string, Declaration>();
  for (const d of declarations) {
    if (d.declared_at > asOf) continue;
    const prev = latest.get(d.fact_key);
    if (!prev || d.declared_at > prev.declared_at || (d.declared_at === prev.declared_at && d.seq > prev.seq)) latest.set(d.fact_key, d);
  }
  return [...latest.values()].sort((a, b) => a.seq - b.seq);
}

export function nodeInScope(n: NodeVersion, scope: ExportScope): boolean {
  return (
    n.known_at <= scope.asOf &&
    (scope.space === undefined || n.space === scope.space) &&
    (scope.category === undefined || n.category === scope.category)
  );
}

/** Whether some version of `id` committed by `maxSeq` is in the bundle. */
function exported(view: TenantView, id: string, scope: ExportScope, maxSeq: number): boolean {
  return view.versionsOf(id).some((v) => v.seq <= maxSeq && nodeInScope(v, scope));
}

function verdictInScope(view: TenantView, v: Verdict, scope: ExportScope, maxSeq: number): boolean {
  if (v.known_at > scope.asOf) return false;
  if (scope.space === undefined && scope.category === undefined) return true;
  if (v.target_id !== null) return exported(view, v.target_id, scope, maxSeq);
  // A verdict that chose no value is "on" the space it was asked in.
  return scope.category === undefined && v.space === scope.space;
}

/**
 * Writes the bundle of `view` under `root` (which must exist). Rows are read up to the view's length at
 * the start, so writes committed meanwhile never make a half-present cut.
 */
export async function stageBundle(
  view: TenantView,
  scope: ExportScope,
  source: string,
  bundleVersion: number,
  root: string,
): Promise<StagedBundle> {
  const stem = bundleStem(view.tenant, scope);
  const dir = join(root, stem);
  await mkdir(dir, { recursive: true });
  const allNodes = view.nodesIn(),
    allEdges = view.edgesOfSpace(),
    allVerdicts = view.verdicts();
  const nodeEnd = allNodes.length,
    edgeEnd = allEdges.length,
    verdictEnd = allVerdicts.length;
  const maxSeq = allNodes[nodeEnd - 1]?.seq ?? 0;
  const batchOf: BatchLookup = { get: (id) => view.batch(id) };
  const maxInvalidationSeq = view.invalidations().at(-1)?.seq ?? 0;
  const batchIds = new Set<string>();
  const f = new InstantFormatter();

  const nodes = new JsonlFile(join(dir, 'nodes.jsonl'));
  try {
    for (let i = 0; i < nodeEnd; i++) {
      const n = allNodes[i];
      if (!n || !nodeInScope(n, scope)) continue;
      if (n.batch_id !== null) batchIds.add(n.batch_id);
      if (nodes.push(nodeLine(n, batchOf, f))) await nodes.flush();
    }
  } finally {
    await nodes.close();
  }

  const edges = new JsonlFile(join(dir, 'edges.jsonl'));
  try {
    for (let i = 0; i < edgeEnd; i++) {
      const e = allEdges[i];
      if (!e || e.known_at > scope.asOf) continue;
      if (!exported(view, e.source_id, scope, maxSeq) || !exported(view, e.target_id, scope, maxSeq)) continue;
      if (e.batch_id !== null) batchIds.add(e.batch_id);
      if (edges.push(edgeLine(e, batchOf, f))) await edges.flush();
    }
  } finally {
    await edges.close();
  }

  const resolutions = new JsonlFile(join(dir, 'resolutions.jsonl'));
  try {
    for (let i = 0; i < verdictEnd; i++) {
      const v = allVerdicts[i];
      if (v && verdictInScope(view, v, scope, maxSeq) && resolutions.push(`${JSON.stringify(bundleResolution(v))}\n`))
        await resolutions.flush();
    }
  } finally {
    await resolutions.close();
  }

  // An invalidation travels with the node it retracts: exported when that node was.
  const invalidations = new JsonlFile(join(dir, 'invalidations.jsonl'));
  try {
    for (const i of view.invalidations()) {
      if (i.known_at > scope.asOf || i.seq > maxInvalidationSeq || !exported(view, i.target_id, scope, maxSeq)) continue;
      if (i.batch_id !== null) batchIds.add(i.batch_id);
      if (invalidations.push(`${JSON.stringify(bundleInvalidation(i, batchOf))}\n`)) await invalidations.flush();
    }
  } finally {
    await invalidations.close();
  }

  const batches = [...batchIds]
    .map((id) => view.batch(id))
    .filter((b) => b !== undefined)
    .sort((a, b) => a.captured_at - b.captured_at);
  const manifest: Manifest = {
    bundle_version: bundleVersion,
    namespace: scope.space === undefined ? { tenant: view.tenant } : { tenant: view.tenant, space: scope.space },
    category: scope.category ?? null,
    source,
    exported_as_of: formatInstant(scope.asOf),
    declarations: {
      facts: factsInForce(view.declarations(), scope.asOf).map(bundleFact),
      batches: batches.map(bundleBatch),
      embedding: null,
    },
    counts: { nodes: nodes.count, edges: edges.count, resolutions: resolutions.count, invalidations: invalidations.count },
  };
  await writeFile(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return { dir, stem, manifest };
}
