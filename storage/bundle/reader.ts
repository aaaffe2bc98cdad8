// Loads an export bundle (a .tar.gz or an unpacked folder) into the same in-memory TenantView the server
// reads from, so list/get/why over a bundle run the server's own read functions and give its answers.
import { createReadStream, existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { TenantView } from '../read/tenant-view.ts';
import { parseInstant, type Micros } from '../time.ts';
import { bundleFolder, unpackFile } from './archive-files.ts';
import {
  BundleRowError,
  batchRowOf,
  declarationOf,
  edgeRecordOf,
  invalidationOf,
  nodeVersionOf,
  verdictOf,
  type BundleEdge,
  type BundleInvalidation,
  type BundleNode,
  type BundleResolution,
  type Manifest,
} from './rows.ts';

export interface LoadedBundle {
  manifest: Manifest;
  view: TenantView;
  /** The bundle's exported_as_of: the latest instant it can answer for. */
  exportedAsOf: Micros;
}

export interface JsonlLine {
  line: number;
  value?: unknown;
  /** Set when the line is not JSON. */
  error?: string;
}

/** The lines of a JSONL file one at a time (blank lines skipped); a missing file has none. */
export async function* readJsonl(path: string): AsyncGenerator<JsonlLine> {
  if (!existsSync(path)) return;
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  let n = 0;
  for await (const text of lines) {
    n++;
    if (text.trim() === '') continue;
    try {
      yield { line: n, value: JSON.parse(text) as unknown };
    } catch (error) {
      yield { line: n, error: (error as Error).message };
    }
  }
}

/**
 * Runs `use` with the folder of the bundle at `path`: the folder itself, or a temporary unpacking of a
 * .tar.gz that is removed afterwards.
 */
export async function withBundleFolder<T>(path: string, use: (folder: string) => Promise<T>): Promise<T> {
  if (!existsSync(path)) throw new Error(`no bundle at ${path}`);
  if (statSync(path).isDirectory()) {
    const folder = bundleFolder(path);
    if (!folder) throw new Error(`${path} holds no manifest.json`);
    return use(folder);
  }
  const tmp = await mkdtemp(join(tmpdir(), 'ledger-bundle-'));
  try {
    await unpackFile(path, tmp, 0);
    const folder = bundleFolder(tmp);
    if (!folder) throw new Error(`${path} is not an export bundle (no manifest.json inside)`);
    return await use(folder);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

export async function readManifest(folder: string): Promise<Manifest> {
  const text = await readFile(join(folder, 'manifest.json'), 'utf8');
  return JSON.parse(text) as Manifest;
}

async function loadRows<R, T>(
  folder: string,
  file: string,
  convert: (row: R, seq: number) => T,
  add: (row: T) => void,
  seq: { n: number },
): Promise<void> {
  for await (const l of readJsonl(join(folder, file))) {
    if (l.error !== undefined) throw new BundleRowError(file, l.line, `not JSON: ${l.error}`);
    try {
      add(convert(l.value as R, ++seq.n));
    } catch (error) {
      throw new BundleRowError(file, l.line, (error as Error).message);
    }
  }
}

/** Loads a bundle folder; a malformed row throws BundleRowError naming the file and line. */
export async function loadBundleFolder(folder: string): Promise<LoadedBundle> {
  const manifest = await readManifest(folder);
  const tenant = manifest.namespace.tenant;
  const view = new TenantView(tenant);
  for (const b of manifest.declarations.batches) view.addBatch(batchRowOf(b, tenant));
  const seq = { n: 0 };
  manifest.declarations.facts.forEach((f) => view.addDeclaration(declarationOf(f, tenant, ++seq.n)));
  await loadRows<BundleNode, ReturnType<typeof nodeVersionOf>>(
    folder,
    'nodes.jsonl',
    (r, s) => nodeVersionOf(r, tenant, s),
    (r) => view.addNode(r),
    seq,
  );
  await loadRows<BundleEdge, ReturnType<typeof edgeRecordOf>>(
    folder,
    'edges.jsonl',
    (r, s) => edgeRecordOf(r, tenant, s),
    (r) => view.addEdge(r),
    seq,
  );
  await loadRows<BundleResolution, ReturnType<typeof verdictOf>>(
    folder,
    'resolutions.jsonl',
    (r, s) => verdictOf(r, tenant, s),
    (r) => view.addVerdict(r),
    seq,
  );
  // Bundles from before invalidations have no such file: nothing was retracted.
  await loadRows<BundleInvalidation, ReturnType<typeof invalidationOf>>(
    folder,
    'invalidations.jsonl',
    (r, s) => invalidationOf(r, tenant, s),
    (r) => view.addInvalidation(r),
    seq,
  );
  return { manifest, view, exportedAsOf: parseInstant(manifest.exported_as_of) };
}

export async function loadBundle(path: string): Promise<LoadedBundle> {
  return withBundleFolder(path, loadBundleFolder);
}
