// Tenants are loaded on first use and evicted under the memory budget: start-up loads nothing, answers
// are the same before and after an eviction, a write to an evicted tenant still sees its rows, a load
// racing with writes misses none of them, and no read of one tenant ever sees another's rows.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyGroup, type LoadedLedger } from '../storage/commit-group.ts';
import { Ledger } from '../storage/log/ledger.ts';
import { nodeVersion } from './helpers/rows.ts';
import { ResidentViews, ROW_BYTES } from '../storage/read/resident-views.ts';
import { RELOAD_WINDOW_MS } from '../storage/reload-watch.ts';
import type { NodeVersion } from '../storage/types.ts';
import { formatInstant } from '../storage/time.ts';
import type { Context } from '../tools/context.ts';
import { listMemories, type ListMemoriesOutput } from '../tools/list-memories.ts';
import { runOperation } from '../tools/operation.ts';

const dir = mkdtempSync(join(tmpdir(), 'ledger-resident-'));
let ledger: Ledger;
const ROWS = 1500;

const nodes = (tenant: string, from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({ id: `${tenant}-${from + i}`, kind: 'claim', statement: `${tenant} statement ${from + i}` }));

const nodeRow = (tenant: string, i: number): NodeVersion => nodeVersion({ seq: i + 1, tenant, id: `${tenant}-${i}` });

async function list(tenant: string, asOf: string, limit = 1000): Promise<ListMemoriesOutput> {
  const ctx: Context = { ledger, tenant, services: { version: 'test' } };
  return (await runOperation(listMemories, { as_of: asOf, limit }, ctx)) as ListMemoriesOutput;
}

/** Every id a list of the whole tenant shows, read through the tenant's view (loaded first, as a read of it does). */
async function allIds(tenant: string, asOf: string): Promise<string[]> {
  const ids: string[] = [];
  const ctx: Context = { ledger, tenant, services: { version: 'test' } };
  // A list without a space of a tenant not resident reads the store page by page and loads nothing
  // (test/list-by-pages.test.ts); this test is about the tenant's view, so the read opens it.
  await ledger.at(tenant, { asOf: 'now' });
  let cursor: string | undefined;
  do {
    const page = (await runOperation(listMemories, { as_of: asOf, limit: 1000, cursor }, ctx)) as ListMemoriesOutput;
    ids.push(...page.items.map((n) => n.id));
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return ids;
}

beforeAll(async () => {
  // Write with a roomy budget, then reopen the same folder with one that holds about one tenant.
  const first = await Ledger.open(dir);
  for (const t of ['a', 'b']) await first.write(t, { space: 's', nodes: nodes(t, 0, ROWS), edges: [] });
  await first.close();
  ledger = await Ledger.open(dir, { memoryMb: 1.5 });
});

afterAll(async () => {
  await ledger.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('tenants resident on use', () => {
  it('start-up loads no tenant; the first read loads only its own', async () => {
    expect(ledger.residentStats().tenants).toBe(0);
    expect(await ledger.firstWriterOf('s')).toBe('a');
    expect(ledger.residentStats().tenants).toBe(0); // the lookup loaded no read model
    expect((await list('a', 'now', 1)).items).toHaveLength(1);
    expect(ledger.tenants()).toEqual([]); // a list without a space reads the store page by page
    await ledger.at('a', { asOf: 'now' });
    expect(ledger.tenants()).toEqual(['a']);
  });

  it('reading another tenant evicts the least recently used one, and its answers come back the same', async () => {
    const asOf = formatInstant(ledger.now());
    const before = await allIds('a', asOf);
    expect(before).toHaveLength(ROWS);
    const b = await allIds('b', asOf);
    expect(b).toHaveLength(ROWS);
    expect(ledger.tenants()).toEqual(['b']);
    expect(ledger.residentStats().evictions).toBeGreaterThan(0);
    expect(await allIds('a', asOf)).toEqual(before);
  });

  it('a write to an evicted tenant is planned against all its rows', async () => {
    await ledger.load('b');
    expect(ledger.tenants()).not.toContain('a');
    const again = await ledger.write('a', { space: 's', nodes: nodes('a', 0, 2), edges: [] });
    expect(again.accepted).toBe(0);
    expect(again.warnings).toHaveLength(2);
    const conflict = await ledger.write('a', { space: 's', nodes: [{ id: 'a-0', kind: 'claim', statement: 'changed' }], edges: [] });
    expect(conflict.refused).toEqual([{ id: 'a-0', kind: 'node', reason: 'id_conflict' }]);
  });

  it('a tenant named with quotes and backslashes loads back its own rows', async () => {
    const odd = 'q\'u\\o"te';
    await ledger.write(odd, { space: 's', nodes: [{ id: 'x', kind: 'claim', statement: 'odd tenant' }], edges: [] });
    await ledger.load('a');
    await ledger.load('b');
    expect(ledger.tenants()).not.toContain(odd);
    const page = await list(odd, 'now');
    expect(page.items.map((n) => [n.id, n.tenant])).toEqual([['x', odd]]);
  });

  it('a load racing with writes misses none of them, and reads never mix tenants', async () => {
    await ledger.load('b');
    const writes = Array.from({ length: 20 }, (_, i) => ledger.write('a', { space: 's', nodes: nodes('a', ROWS + i * 5, 5), edges: [] }));
    const reads = Array.from({ length: 10 }, async (_, i) => {
      const t = i % 2 === 0 ? 'a' : 'b';
      const page = await list(t, 'now', 1000);
      expect(page.items.every((n) => n.tenant === t && n.id.startsWith(`${t}-`))).toBe(true);
    });
    const outcomes = await Promise.all(writes);
    await Promise.all(reads);
    expect(outcomes.every((o) => o.accepted === 5)).toBe(true);
    await ledger.load('b');
    expect(await allIds('a', 'now')).toHaveLength(ROWS + 100);
  });
});

describe('tenants that do not fit the budget', () => {
  it('counts a load soon after an eviction as a reload and says so in the log once a minute', async () => {
    const loaded = (tenant: string): LoadedLedger => ({
      ...emptyGroup(),
      nodes: [nodeRow(tenant, 0), nodeRow(tenant, 1)],
    });
    let now = 0;
    const warnings: string[] = [];
    // Room for one tenant of two rows: every load of the other evicts it.
    const views = new ResidentViews(
      async (t) => loaded(t),
      2 * ROW_BYTES,
      (_scope, fn) => fn(),
      (m) => warnings.push(m),
      () => now,
    );
    await views.ensure('a');
    await views.ensure('b'); // evicts a
    expect(views.stats()).toMatchObject({ tenants: 1, evictions: 1, reloads: 0 });
    now = 10_000;
    await views.ensure('a'); // 10 s after its eviction: a reload
    expect(views.stats()).toMatchObject({ evictions: 2, reloads: 1 });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/tenant "a" is loaded again 10\.0 s after its eviction.*SVC_MEMORY_MB/);
    now = 20_000;
    await views.ensure('b'); // another reload, within the minute of the warning: counted, not logged again
    expect(views.stats().reloads).toBe(2);
    expect(warnings).toHaveLength(1);
    now = 20_000 + RELOAD_WINDOW_MS + 1;
    await views.ensure('a'); // evicted long ago: a plain load
    expect(views.stats().reloads).toBe(2);
    now += 1_000;
    await views.ensure('b'); // evicted a second ago, past the minute since the warning: logged again
    expect(views.stats().reloads).toBe(3);
    expect(warnings).toHaveLength(2);
  });

  it('a view kept while pinned past the budget is evicted on the next use once unpinned, and not before', async () => {
    const loaded = (tenant: string): LoadedLedger => ({ ...emptyGroup(), nodes: [nodeRow(tenant, 0), nodeRow(tenant, 1)] });
    const views = new ResidentViews(
      async (t) => loaded(t),
      2 * ROW_BYTES,
      (_scope, fn) => fn(),
    );
    await views.ensure('a');
    const release = views.pin('a');
    await views.ensure('b'); // over budget: a is pinned and b is the one just used
    expect(views.tenants().sort()).toEqual(['a', 'b']);
    await views.ensure('b'); // a use while a is still pinned evicts nothing
    expect(views.tenants().sort()).toEqual(['a', 'b']);
    release();
    await views.ensure('b'); // a use of b, with a free now: a goes
    expect(views.tenants()).toEqual(['b']);
    expect(views.stats().evictions).toBe(1);
  });

  it('commits that grow the views past the budget evict the least recently used, and only then', async () => {
    const loaded = (tenant: string): LoadedLedger => ({ ...emptyGroup(), nodes: [nodeRow(tenant, 0)] });
    // Room for four rows: two tenants of one row each, and two rows more.
    const views = new ResidentViews(
      async (t) => loaded(t),
      4 * ROW_BYTES,
      (_scope, fn) => fn(),
    );
    await views.ensure('a');
    await views.ensure('b');
    views.apply({ ...emptyGroup(), nodes: [nodeRow('b', 1), nodeRow('b', 2)] });
    expect(views.tenants().sort()).toEqual(['a', 'b']); // four rows: at the budget
    views.apply({ ...emptyGroup(), nodes: [nodeRow('b', 3)] });
    expect(views.tenants()).toEqual(['b']);
    expect(views.stats()).toMatchObject({ evictions: 1, bytes: 4 * ROW_BYTES });
  });
});
