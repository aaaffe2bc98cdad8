// A data folder of storage layout 2 (rows with a Space table of first writers, no index of rows by space,
// no tseq) opens with this release: migrated once through layout 3 (tested in data-folder-layout2.test.ts)
// to layouts 4 and 5, with one log line for each step, and a read of one space then
// finds its rows, its edges and the invalidations of its nodes (one written in another space) through
// the new index, without loading the tenant. The old folder is made here with layout 2's schema, written
// out below, so the test does not depend on today's.
import kuzu from 'kuzu';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Ledger } from '../storage/log/ledger.ts';

const SCHEMA_2 = [
  'CREATE NODE TABLE Batch(key STRING, tenant STRING, id STRING, declared_captured_at INT64, reason STRING, captured_at INT64, PRIMARY KEY(key))',
  'CREATE NODE TABLE Block(seq INT64, tenant STRING, id STRING, space STRING, kind STRING, statement STRING, category STRING, payload STRING, ' +
    'asserted_at INT64, valid_from INT64, valid_to INT64, captured_at INT64, known_at INT64, batch_id STRING, fact_key STRING, fact_value STRING, ' +
    'hash STRING, PRIMARY KEY(seq))',
  'CREATE NODE TABLE Edge(seq INT64, tenant STRING, source_id STRING, target_id STRING, edge_type STRING, confidence DOUBLE, lag STRING, ' +
    'mechanism STRING, space STRING, asserted_at INT64, valid_from INT64, valid_to INT64, captured_at INT64, known_at INT64, batch_id STRING, ' +
    'hash STRING, PRIMARY KEY(seq))',
  'CREATE NODE TABLE Declaration(seq INT64, tenant STRING, fact_key STRING, key_fields STRING, policy STRING, source_order STRING, declared_at INT64, PRIMARY KEY(seq))',
  'CREATE NODE TABLE Verdict(seq INT64, tenant STRING, fact_key STRING, target_id STRING, value STRING, outcome STRING, method STRING, ruleset STRING, ' +
    'resolver STRING, decided_at INT64, known_at INT64, space STRING, hash STRING, PRIMARY KEY(seq))',
  'CREATE NODE TABLE Invalidation(seq INT64, tenant STRING, target_id STRING, space STRING, reason STRING, by STRING, invalidated_at INT64, ' +
    'known_at INT64, batch_id STRING, PRIMARY KEY(seq))',
  'CREATE NODE TABLE Space(name STRING, tenant STRING, first_captured_at INT64, PRIMARY KEY(name))',
];

const T = Date.UTC(2025, 0, 1) * 1000;
const OPEN_END = Number.MAX_SAFE_INTEGER;
const enc = (s: string): string => `'${JSON.stringify(s).replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

async function makeFolder2(dataDir: string): Promise<void> {
  mkdirSync(join(dataDir, 'graph'), { recursive: true });
  const db = new kuzu.Database(join(dataDir, 'graph', 'graph.kuzu'));
  const conn = new kuzu.Connection(db);
  const run = async (q: string): Promise<void> => {
    const r = await conn.query(q);
    (Array.isArray(r) ? r : [r]).forEach((x) => x.close());
  };
  for (const ddl of SCHEMA_2) await run(ddl);
  // n1 lives in user:1 until T+10, then in user:2: its invalidation (recorded in user:1) retracts both.
  const rows: [number, string, string, string, number, number][] = [
    [1, 'acme', 'n1', 'user:1', T + 1, T + 10],
    [2, 'acme', 'n2', 'user:1', T + 2, OPEN_END],
    [3, 'acme', 'n1', 'user:2', T + 10, OPEN_END],
    [4, 'acme', 'n3', 'user:2', T + 4, OPEN_END],
    [5, 'beta', 'n1', 'user:2', T + 5, OPEN_END],
  ];
  for (const [seq, tenant, id, space, from, to] of rows)
    await run(
      `CREATE (:Block {seq: ${seq}, tenant: ${enc(tenant)}, id: ${enc(id)}, space: ${enc(space)}, kind: ${enc('claim')}, ` +
        `statement: ${enc(`statement ${id} ${seq}`)}, payload: ${enc('{}')}, asserted_at: ${T + seq}, valid_from: ${from}, ` +
        `valid_to: ${to}, captured_at: ${T + seq}, known_at: ${T + seq}, hash: ${enc(String(seq).padStart(64, '0'))}})`,
    );
  await run(
    `CREATE (:Edge {seq: 6, tenant: ${enc('acme')}, source_id: ${enc('n3')}, target_id: ${enc('n1')}, edge_type: ${enc('CAUSES')}, ` +
      `space: ${enc('user:2')}, asserted_at: ${T + 6}, valid_from: ${T + 6}, valid_to: ${OPEN_END}, captured_at: ${T + 6}, ` +
      `known_at: ${T + 6}, hash: ${enc('e'.repeat(64))}})`,
  );
  await run(
    `CREATE (:Invalidation {seq: 7, tenant: ${enc('acme')}, target_id: ${enc('n1')}, space: ${enc('user:1')}, reason: ${enc('wrong')}, ` +
      `invalidated_at: ${T + 7}, known_at: ${T + 7}})`,
  );
  for (const name of ['user:1', 'user:2'])
    await run(`CREATE (:Space {name: ${enc(name)}, tenant: ${enc('acme')}, first_captured_at: ${T}})`);
  await conn.close();
  await db.close();
  writeFileSync(join(dataDir, 'graph', 'layout'), '2');
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'folder-layout2-'));
});
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

describe('a data folder of storage layout 2', () => {
  it('is indexed by space once, with one log line, and a space read finds its rows without the tenant', async () => {
    const dataDir = join(dir, 'data');
    await makeFolder2(dataDir);
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const ledger = await Ledger.open(dataDir);
    try {
      const lines = log.mock.calls.map((c) => String(c[0])).filter((l) => l.includes('migrated'));
      expect(lines).toHaveLength(3);
      expect(lines[0]).toMatch(/migrated once to layout 3/);
      expect(lines[1]).toMatch(/from storage layout 2 to 4: 6 node and edge rows and 1 invalidations indexed by space/);
      expect(lines[2]).toMatch(/from storage layout 2 to 5: 5 \(id, space\) pairs indexed/);
      expect(readFileSync(join(dataDir, 'graph', 'layout'), 'utf8')).toBe('5');

      const two = await ledger.viewOf('acme', 'user:2');
      expect(two.nodesIn().map((n) => [n.tenant, n.id, n.seq])).toEqual([
        ['acme', 'n1', 3],
        ['acme', 'n3', 4],
      ]);
      expect(two.edgesOfSpace().map((e) => e.seq)).toEqual([6]);
      // The invalidation was recorded in user:1, where n1 was first written; it retracts n1 here too.
      expect(two.invalidationsOf('n1').map((i) => i.seq)).toEqual([7]);
      expect(ledger.tenants()).toEqual([]);
      const snap = await ledger.at('acme', { asOf: 'now', space: 'user:2' });
      expect(snap.list({ limit: 10 }).items.map((n) => n.id)).toEqual(['n3']);
      expect((await ledger.viewOf('beta', 'user:2')).nodesIn().map((n) => n.seq)).toEqual([5]);
      expect((await ledger.viewOf('acme', 'user:1')).nodesIn().map((n) => n.seq)).toEqual([1, 2]);
      expect(ledger.tenants()).toEqual([]);
    } finally {
      await ledger.close();
    }

    log.mockClear();
    const again = await Ledger.open(dataDir);
    try {
      expect(log.mock.calls.filter((c) => String(c[0]).includes('migrated'))).toHaveLength(0);
      // Written after the migration: held by its space as it is committed.
      await again.write('acme', { space: 'user:2', nodes: [{ id: 'n9', kind: 'claim', statement: 'new' }], edges: [] });
      expect((await again.viewOf('acme', 'user:2')).nodesIn().map((n) => n.id)).toEqual(['n1', 'n3', 'n9']);
    } finally {
      await again.close();
    }
  });
});
