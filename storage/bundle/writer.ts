// Stages an export bundle in a folder: one directory holding manifest.json and four JSONL files, written
// as streams from a source handing the tenant's rows over a chunk at a time in commit order (the tenant's
// in-memory view, or the store read page by page: bundle-source.ts), so neither the bundle nor, from the
// store, the tenant is ever held whole. The scope of an export: rows known at as_of (validity is not
// filtered), nodes of the space and category when given, the edges whose two ends were exported (every
// edge known at as_of when neither is given), and the verdicts on exported nodes.
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import { join } from 'node:path';
import type { BundleSource } from './bundle-source.ts';
import { compactInstant, formatInstant, type Micros } from '../time.ts';
import type { BatchRow, Declaration, EdgeRecord, NodeVersion, Verdict } from '../types.ts';
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

/** An export of the whole tenant (no space, no category) carries every edge and verdict known at as_of. */
const wholeTenant = (scope: ExportScope): boolean => scope.space === undefined && scope.category === undefined;

/**
 * Edges follow the ids exported. A whole tenant's export carries every edge known at as_of: a backfilled
 * edge can be known before one of its ends (its declared instant is earlier than the end's), reads at
 * as_of count it (a SUPERSEDES edge makes `superseded_by`), and SPEC.md exports every row learned by
 * as_of; the end learned later is left out, as everything learned later is.
 */
function edgeInScope(e: EdgeRecord, scope: ExportScope, exported: ReadonlySet<string>): boolean {
  if (e.known_at > scope.asOf) return false;
  if (wholeTenant(scope)) return true;
  return exported.has(e.source_id) && exported.has(e.target_id);
}

function verdictInScope(v: Verdict, scope: ExportScope, exported: ReadonlySet<string>): boolean {
  if (v.known_at > scope.asOf) return false;
  if (wholeTenant(scope)) return true;
  if (v.target_id !== null) return exported.has(v.target_id);
  // A verdict that chose no value is "on" the space it was asked in.
  return scope.category === undefined && v.space === scope.space;
}

/** The batches rows name, fetched from the source the first time an id is met, then kept for the manifest. */
class Batches implements BatchLookup {
  readonly #source: BundleSource;
  readonly #rows = new Map<string, BatchRow | undefined>();
  /** Batch ids of the rows written, in the order first met (the manifest's order among equal captured_at). */
  readonly named = new Set<string>();

  constructor(source: BundleSource) {
    this.#source = source;
  }

  get(id: string): BatchRow | undefined {
    return this.#rows.get(id);
  }

  /** Fetches the batches of `rows` not met yet. */
  async meet(rows: readonly { batch_id: string | null }[]): Promise<void> {
    const missing = new Set<string>();
    for (const r of rows) if (r.batch_id !== null && !this.#rows.has(r.batch_id)) missing.add(r.batch_id);
    if (missing.size === 0) return;
    const found = new Map((await this.#source.batches([...missing])).map((b) => [b.id, b]));
    for (const id of missing) this.#rows.set(id, found.get(id));
  }

  name(id: string | null): void {
    if (id !== null) this.named.add(id);
  }
}

/**
 * Writes the bundle of `source` under `root` (which must exist). The source cuts its rows where the tenant
 * stood when it was opened, so writes committed meanwhile never make a half-present cut. A version is
 * exported when it is in scope; an id is exported when one of its versions is, and edges, verdicts and
 * invalidations follow the ids exported (held as a set of ids, never as rows).
 */
export async function stageBundle(
  source: BundleSource,
  scope: ExportScope,
  producer: string,
  bundleVersion: number,
  root: string,
): Promise<StagedBundle> {
  const stem = bundleStem(source.tenant, scope);
  const dir = join(root, stem);
  await mkdir(dir, { recursive: true });
  const batches = new Batches(source);
  const exported = new Set<string>();
  const f = new InstantFormatter();

  const nodes = new JsonlFile(join(dir, 'nodes.jsonl'));
  try {
    for await (const page of source.nodes()) {
      await batches.meet(page);
      for (const n of page) {
        if (!nodeInScope(n, scope)) continue;
        exported.add(n.id);
        batches.name(n.batch_id);
        if (nodes.push(nodeLine(n, batches, f))) await nodes.flush();
      }
    }
  } finally {
    await nodes.close();
  }

  const edges = new JsonlFile(join(dir, 'edges.jsonl'));
  try {
    for await (const page of source.edges()) {
      const kept = page.filter((e) => edgeInScope(e, scope, exported));
      await batches.meet(kept);
      for (const e of kept) {
        batches.name(e.batch_id);
        if (edges.push(edgeLine(e, batches, f))) await edges.flush();
      }
    }
  } finally {
    await edges.close();
  }

  const resolutions = new JsonlFile(join(dir, 'resolutions.jsonl'));
  try {
    for await (const page of source.verdicts())
      for (const v of page)
        if (verdictInScope(v, scope, exported) && resolutions.push(`${JSON.stringify(bundleResolution(v))}\n`)) await resolutions.flush();
  } finally {
    await resolutions.close();
  }

  // An invalidation travels with the node it retracts: exported when that node was.
  const invalidations = new JsonlFile(join(dir, 'invalidations.jsonl'));
  try {
    for await (const page of source.invalidations()) {
      const kept = page.filter((i) => i.known_at <= scope.asOf && exported.has(i.target_id));
      await batches.meet(kept);
      for (const i of kept) {
        batches.name(i.batch_id);
        if (invalidations.push(`${JSON.stringify(bundleInvalidation(i, batches))}\n`)) await invalidations.flush();
      }
    }
  } finally {
    await invalidations.close();
  }

  const named = [...batches.named]
    .map((id) => batches.get(id))
    .filter((b) => b !== undefined)
    .sort((a, b) => a.captured_at - b.captured_at);
  const manifest: Manifest = {
    bundle_version: bundleVersion,
    namespace: scope.space === undefined ? { tenant: source.tenant } : { tenant: source.tenant, space: scope.space },
    category: scope.category ?? null,
    source: producer,
    exported_as_of: formatInstant(scope.asOf),
    declarations: {
      facts: factsInForce(await source.declarations(), scope.asOf).map(bundleFact),
      batches: named.map(bundleBatch),
      embedding: null,
    },
    counts: { nodes: nodes.count, edges: edges.count, resolutions: resolutions.count, invalidations: invalidations.count },
  };
  await writeFile(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return { dir, stem, manifest };
}
