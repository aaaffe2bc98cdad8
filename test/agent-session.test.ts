// An agent's session over MCP only: the real `memory-ledger stdio` process driven by the SDK's stdio
// client, as a model would use it. It learns facts over several days (backfilled), changes a belief with
// SUPERSEDES, invalidates a wrong block, then asks with as_of "now": current beliefs come first, and an
// earlier as_of still shows the old world exactly.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'memory-ledger.mjs');
const dataDir = mkdtempSync(join(tmpdir(), 'ledger-agent-'));
const SPACE = 'user:ada';

let client: Client;
type Json = Record<string, any>;

async function call(name: string, args: Json): Promise<Json> {
  const r = await client.callTool({ name, arguments: args });
  if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.structuredContent ?? r.content)}`);
  return r.structuredContent as Json;
}

/** Tells the agent what it learned on `day` (a backfilled write declared at the end of that day). */
async function learn(day: string, nodes: Json[], edges: Json[] = []): Promise<Json> {
  return call('remember', {
    space: SPACE,
    nodes,
    edges,
    backfill: { declared_captured_at: `${day}T23:00:00Z`, reason: `notes of ${day}` },
  });
}

const ids = (rows: Json[]): string[] => rows.map((r) => r.id as string);

beforeAll(async () => {
  const env = { ...getDefaultEnvironment(), SVC_DATA_DIR: dataDir, SVC_TENANT: 'agent', SVC_EMBEDDER: 'local', SVC_EXTRACTOR: 'local' };
  client = new Client({ name: 'agent-session', version: '1' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'stdio'], env, cwd: ROOT, stderr: 'pipe' }));
});

afterAll(async () => {
  await client.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('an agent session over MCP stdio', () => {
  it('learns over several days, changes a belief, retracts a wrong block, and reads the present and the past', async () => {
    // The agent first learns the server's clock from the tool surface itself: as_of "now" is certified.
    const first = await call('list_memories', { as_of: 'now', space: SPACE });
    expect(first.items).toEqual([]);
    expect(first.certificate.as_of).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);

    await learn('2024-03-01', [
      { id: 'home-berlin', kind: 'claim', statement: 'Ada lives in Berlin', asserted_at: '2024-03-01T09:00:00Z' },
      { id: 'job', kind: 'claim', statement: 'Ada works as a compiler engineer', asserted_at: '2024-03-01T09:05:00Z' },
    ]);
    await learn('2024-03-05', [{ id: 'cat', kind: 'claim', statement: 'Ada has a cat named Pixel', asserted_at: '2024-03-05T10:00:00Z' }]);
    // A changed belief: a new block and a SUPERSEDES edge, never an overwrite.
    await learn(
      '2024-04-10',
      [{ id: 'home-lisbon', kind: 'claim', statement: 'Ada lives in Lisbon now', asserted_at: '2024-04-10T08:00:00Z' }],
      [{ source_id: 'home-lisbon', target_id: 'home-berlin', edge_type: 'supersedes' }],
    );

    // A wrong block, retracted with a reason.
    const inv = await call('invalidate_memory', { id: 'cat', reason: "Pixel is her neighbour's cat", by: 'agent' });
    expect(inv.invalidation).toMatchObject({ target_id: 'cat', by: 'agent' });
    expect(inv.warnings).toEqual([]);

    // Search in the present: the current home ranks above the superseded one, which says it was superseded.
    const found = await call('search_memory', { query: 'where does Ada live', as_of: 'now', space: SPACE });
    const direct = (found.results as Json[]).filter((r) => r.match === 'direct').map((r) => r.node);
    const lisbon = direct.findIndex((n) => n.id === 'home-lisbon');
    const berlin = direct.findIndex((n) => n.id === 'home-berlin');
    expect(lisbon).toBeGreaterThanOrEqual(0);
    expect(berlin).toBeGreaterThan(lisbon);
    expect(direct[berlin].superseded_by).toEqual(['home-lisbon']);
    expect((found.results as Json[]).some((r) => r.node.id === 'cat')).toBe(false);

    // current_only: only what is believed now.
    const current = await call('list_memories', { as_of: 'now', space: SPACE, current_only: true });
    expect(ids(current.items).sort()).toEqual(['home-lisbon', 'job']);
    const currentSearch = await call('search_memory', { query: 'Ada lives', as_of: 'now', space: SPACE, current_only: true });
    expect((currentSearch.results as Json[]).map((r) => r.node.id)).not.toContain('home-berlin');

    // Without current_only the superseded block is still listed, marked; the retracted one is counted, not shown.
    const all = await call('list_memories', { as_of: 'now', space: SPACE });
    expect(ids(all.items).sort()).toEqual(['home-berlin', 'home-lisbon', 'job']);
    expect(all.certificate.invalidated).toBe(1);
    const cat = await call('get_memory', { id: 'cat', as_of: 'now' });
    expect(cat).toMatchObject({ item: null, reason: 'invalidated', invalidation: { target_id: 'cat' } });

    // The past, exactly: on 2024-03-06 the ledger knew Berlin, the job and the cat, nothing superseded yet.
    const past = await call('list_memories', { as_of: '2024-03-06', space: SPACE });
    expect(ids(past.items).sort()).toEqual(['cat', 'home-berlin', 'job']);
    expect((past.items as Json[]).every((n) => n.superseded_by.length === 0 && !('invalidated' in n))).toBe(true);
    expect(past.certificate.backfill).toEqual({ batches: 2, rows: 3 });
    expect(past.certificate.invalidated).toBeUndefined();
    const pastSearch = await call('search_memory', { query: 'where does Ada live', as_of: '2024-03-06', space: SPACE });
    expect((pastSearch.results as Json[]).map((r) => r.node.id)).not.toContain('home-lisbon');
    // And before the first day nothing was known: the certificate says the rows exist but were learned later.
    const before = await call('list_memories', { as_of: '2024-02-01', space: SPACE });
    expect(before.items).toEqual([]);
    expect(before.certificate.masked.node).toBe(4);

    // The evidence chain of the current belief names its predecessor.
    const why = await call('why', { id: 'home-lisbon', as_of: 'now' });
    expect((why.chain as Json[]).map((l) => [l.node.id, l.role])).toEqual([
      ['home-berlin', 'predecessor'],
      ['home-lisbon', 'subject'],
    ]);

    // The spaces this agent can see, with counts as of now.
    const spaces = await call('list_spaces', { as_of: 'now' });
    expect(spaces.spaces).toEqual([expect.objectContaining({ space: SPACE, nodes: 4, edges: 1 })]);
  });
});
