// Isolation under eviction: with a read-model budget that holds about one tenant, reads of space A (with
// `space`, and at an address confined to A) and reads of tenant A run while tenant B is written in many
// spaces, loaded and evicted. No answer may show a row of another space or another tenant, and every row of
// A's space is in each answer.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../storage/log/ledger.ts';
import type { Context } from '../tools/context.ts';
import { listMemories, type ListMemoriesOutput } from '../tools/list-memories.ts';
import { runOperation } from '../tools/operation.ts';

const dir = mkdtempSync(join(tmpdir(), 'isolation-eviction-'));
let ledger: Ledger;
const PER_SPACE = 40;
const SPACES = 30;

const nodes = (tenant: string, space: string, n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => ({
    id: `${tenant}.${space}.${from + i}`,
    kind: 'claim',
    statement: `${tenant} ${space} ${from + i}`,
  }));

async function listAll(ctx: Context, space?: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const input = { as_of: 'now', limit: 1000, cursor, ...(space === undefined ? {} : { space }) };
    const page = (await runOperation(listMemories, input, ctx)) as ListMemoriesOutput;
    ids.push(...page.items.map((n) => n.id));
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return ids;
}

beforeAll(async () => {
  const first = await Ledger.open(dir);
  for (const t of ['a', 'b'])
    for (let s = 0; s < SPACES; s++) await first.write(t, { space: `user:${s}`, nodes: nodes(t, `user:${s}`, PER_SPACE), edges: [] });
  await first.close();
  // ~1,400 rows of read model: one tenant of 1,200 rows fits, two do not.
  ledger = await Ledger.open(dir, { memoryMb: 1 });
});

afterAll(async () => {
  await ledger.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('isolation while read models are loaded and evicted', () => {
  it('never shows another space or tenant to a confined read, a space read or a tenant read', async () => {
    const a: Context = { ledger, tenant: 'a', services: { version: 'test' } };
    const confined: Context = { ...a, confinedSpace: 'user:3' };
    const b: Context = { ledger, tenant: 'b', services: { version: 'test' } };
    const evictionsBefore = ledger.residentStats().evictions;
    let stop = false;
    // Tenant B written in every space and read back, over and over: its models are loaded and evict A's.
    const churn = (async () => {
      for (let k = 0; !stop && k < 60; k++) {
        const space = `user:${k % SPACES}`;
        await ledger.write('b', { space, nodes: nodes('b', space, 2, PER_SPACE + k), edges: [] });
        await listAll(b, space);
        // Read whole now and then (a write loads only its spaces): B's whole model evicts A's.
        if (k % 5 === 0) await listAll(b);
      }
    })();
    const wantSpace = nodes('a', 'user:3', PER_SPACE).map((n) => n.id);
    for (let round = 0; round < 8; round++) {
      // A confined read passes a space of its own choosing; the address wins.
      const viaAddress = await runOperation(listMemories, { as_of: 'now', limit: 1000, space: 'user:4' }, confined);
      expect((viaAddress as ListMemoriesOutput).items.map((n) => n.id)).toEqual(wantSpace);
      expect(await listAll(a, 'user:3')).toEqual(wantSpace);
      const tenant = await listAll(a);
      expect(tenant).toHaveLength(PER_SPACE * SPACES);
      expect(tenant.every((id) => id.startsWith('a.'))).toBe(true);
    }
    stop = true;
    await churn;
    // The budget was too small for both tenants: models were evicted while the reads ran.
    expect(ledger.residentStats().evictions).toBeGreaterThan(evictionsBefore);
    const bAll = await listAll(b);
    expect(bAll.every((id) => id.startsWith('b.'))).toBe(true);
  });
});
