// Export helpers for tests: fetch an export through the in-process app, keep it as a file, list and
// read its entries with node-tar.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Parser, type ReadEntry } from 'tar';
import type { TestApp } from './app.ts';

export interface ExportedFile {
  status: number;
  headers: Headers;
  buf: Buffer;
}

/** Saves an archive as a file in a fresh temp folder (the caller removes the folder). */
export function saveArchive(buf: Buffer): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-test-archive-'));
  const file = join(dir, 'bundle.tar.gz');
  writeFileSync(file, buf);
  return { dir, file };
}

export async function exportArchive(t: TestApp, query: Record<string, string>, key?: string): Promise<ExportedFile> {
  const url = new URL('http://ledger.test/v1/export');
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  const res = await t.app.request(url.toString(), { headers: key ? { authorization: `Bearer ${key}` } : {} });
  return { status: res.status, headers: res.headers, buf: Buffer.from(await res.arrayBuffer()) };
}

/** Every entry of a .tar.gz as path → text (directories map to null), read by node-tar's parser. */
export async function tarEntries(buf: Buffer): Promise<Map<string, string | null>> {
  const entries = new Map<string, string | null>();
  const parser = new Parser();
  const pending: Promise<void>[] = [];
  parser.on('entry', (entry: ReadEntry) => {
    if (entry.type === 'Directory') {
      entries.set(entry.path, null);
      entry.resume();
      return;
    }
    pending.push(
      entry.concat().then((b) => {
        entries.set(entry.path, b.toString('utf8'));
      }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    parser.on('end', () => resolve());
    parser.on('error', reject);
    Readable.from([buf]).pipe(parser);
  });
  await Promise.all(pending);
  return entries;
}

export const jsonl = (text: string | null | undefined): Record<string, unknown>[] =>
  (text ?? '')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

export interface ReadBack {
  stem: string;
  manifest: Record<string, any>;
  nodes: Record<string, any>[];
  edges: Record<string, any>[];
  resolutions: Record<string, any>[];
}

export async function readBack(buf: Buffer): Promise<ReadBack> {
  const entries = await tarEntries(buf);
  const files = [...entries.keys()].filter((k) => entries.get(k) !== null);
  const stem = files[0]?.split('/')[0] ?? '';
  const get = (name: string): string | null | undefined => entries.get(`${stem}/${name}`);
  return {
    stem,
    manifest: JSON.parse(get('manifest.json') ?? 'null') as Record<string, any>,
    nodes: jsonl(get('nodes.jsonl')),
    edges: jsonl(get('edges.jsonl')),
    resolutions: jsonl(get('resolutions.jsonl')),
  };
}
