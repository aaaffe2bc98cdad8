// A data folder of storage layout 2 (the release before per-tenant sequence numbers) opens with this
// release: every row gets its tseq once, with one log line (a row's seq; a batch's and a space's that of
// the first row naming it), rows a crash left in a layout-2 write journal are copied in with tseq = their
// seq, and the tenant exports and pages as one written here. The old folder is made here with layout 2's
// schema, so the test does not depend on today's.
import kuzu from 'kuzu';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { journalRecordOf } from '../storage/log/kuzu/tables.ts';
import { emptyGroup } from '../storage/commit-group.ts';
import { Ledger } from '../storage/log/ledger.ts';
import { exportPage } from '../storage/log/tenant-copy.ts';
import { encodeRecord } from '../storage/log/kuzu/write-journal.ts';
import { nodeVersion } from './helpers/rows.ts';

const SCHEMA_LAYOUT_2 = [
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

async function makeFolderLayout2(dataDir: string): Promise<void> {
  const graphDir = join(dataDir, 'graph');
  mkdirSync(graphDir, { recursive: true });
  const db = new kuzu.Database(join(graphDir, 'graph.kuzu'));
  const conn = new kuzu.Connection(db);
  const run = async (q: string): Promise<void> => {
    const r = await conn.query(q);
    (Array.isArray(r) ? r : [r]).forEach((x) => x.close());
  };
  for (const ddl of SCHEMA_LAYOUT_2) await run(ddl);
  const rows: [number, string, string, string, string | null][] = [
    [1, 'acme', 'n1', 'user:1', null],
    [2, 'beta', 'n2', 'svc:shared', null],
    [3, 'acme', 'n3', 'user:2', 'batch-9'],
    [4, 'acme', 'n4', 'user:2', 'batch-9'],
    [5, 'acme', 'n5', 'svc:shared', null],
  ];
  for (const [seq, tenant, id, space, batch] of rows)
    await run(
      `CREATE (:Block {seq: ${seq}, tenant: ${enc(tenant)}, id: ${enc(id)}, space: ${enc(space)}, kind: ${enc('claim')}, ` +
        `statement: ${enc(`statement ${id}`)}, payload: ${enc('{}')}, asserted_at: ${T + seq}, valid_from: ${T + seq}, ` +
        `valid_to: ${OPEN_END}, captured_at: ${T + seq}, known_at: ${T + seq}, hash: ${enc(String(seq).padStart(64, '0'))}` +
        `${batch ? `, batch_id: ${enc(batch)}` : ''}})`,
    );
  await run(
    `CREATE (:Batch {key: ${enc('acme\u001fbatch-9')}, tenant: ${enc('acme')}, id: ${enc('batch-9')}, declared_captured_at: ${T - 10}, ` +
      `reason: ${enc('archive')}, captured_at: ${T + 3}})`,
  );
  for (const [name, tenant, first] of [
    ['user:1', 'acme', 1],
    ['svc:shared', 'beta', 2],
    ['user:2', 'acme', 3],
  ] as const)
    await run(`CREATE (:Space {name: ${enc(name)}, tenant: ${enc(tenant)}, first_captured_at: ${T + first}})`);
  await conn.close();
  await db.close();
  writeFileSync(join(graphDir, 'layout'), '2');
  // A crash left one acknowledged row in the journal, written by layout 2: its cells lack tseq.
  const record = journalRecordOf({
    ...emptyGroup(),
    nodes: [nodeVersion({ seq: 6, id: 'n6', tenant: 'acme', space: 'user:1', captured_at: T + 6, known_at: T + 6 })],
  });
  // Layout 2's tables only: today's record also carries the indexes by space and by id (layouts 4 and 5).
  const old = {
    tables: record.tables
      .filter((t) => t.table !== 'TenantSpace' && !t.table.startsWith('Holds') && !t.table.startsWith('Ident'))
      .map((t) => ({ table: t.table, rows: t.rows.map((r) => r.slice(0, -1)) })),
  };
  writeFileSync(join(graphDir, 'journal-0000000001.log'), encodeRecord(old));
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'folder-layout2-'));
});
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

describe('a data folder of layout 2', () => {
  it('gets per-tenant sequence numbers once, with one log line, and pages and writes after them', async () => {
    const dataDir = join(dir, 'data');
    await makeFolderLayout2(dataDir);
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const ledger = await Ledger.open(dataDir);
    try {
      const lines = log.mock.calls.filter((c) => String(c[0]).includes('migrated once to layout 3'));
      expect(lines).toHaveLength(1);
      // Then on to layout 4 (the index of rows by space), in the same open.
      expect(log.mock.calls.filter((c) => String(c[0]).includes('from storage layout 2 to 4'))).toHaveLength(1);
      expect(log.mock.calls.filter((c) => String(c[0]).includes('from storage layout 2 to 5'))).toHaveLength(1);
      expect(readFileSync(join(dataDir, 'graph', 'layout'), 'utf8')).toBe('5');
      // The row the crash left in the layout-2 journal is held by its space like the stored ones.
      expect((await ledger.viewOf('acme', 'user:1')).nodesIn().map((n) => n.id)).toEqual(['n1', 'n6']);
      expect((await ledger.viewOf('acme', 'user:2')).nodesIn().map((n) => n.id)).toEqual(['n3', 'n4']);
      const page = await exportPage(ledger, 'acme', 0, 100);
      const brief = page.rows.map(
        (r) => `${r.table}:${r.table === 'space' ? r.space : r.table === 'batch' || r.table === 'node' ? r.id : ''}@${r.tseq}`,
      );
      expect(brief).toEqual(
        ['node:n1@1', 'space:user:1@1', 'batch:batch-9@3', 'space:user:2@3', 'node:n3@3', 'node:n4@4', 'node:n5@5', 'node:n6@6'].sort(
          (x, y) => Number(x.split('@')[1]) - Number(y.split('@')[1]) || rank(x) - rank(y),
        ),
      );
      expect(page.next_after).toBeNull();
      expect(page.last_tseq).toBe(6);
      // beta's space row goes with beta, not with acme's n5 in that space.
      expect((await exportPage(ledger, 'beta', 0, 100)).rows.map((r) => `${r.table}@${r.tseq}`)).toEqual(['space@2', 'node@2']);
      // A cursor after n3 pages from n4, and a new write comes after every migrated row.
      const view = await ledger.load('acme');
      expect(view.nodesIn().map((n) => n.tseq)).toEqual([1, 3, 4, 5, 6]);
      await ledger.write('acme', { space: 'user:1', nodes: [{ id: 'n7', kind: 'claim', statement: 'new' }], edges: [] });
      expect(view.nodesIn().at(-1)!.tseq).toBeGreaterThan(6);
    } finally {
      await ledger.close();
    }
    log.mockClear();
    const again = await Ledger.open(dataDir);
    try {
      expect(log.mock.calls.filter((c) => String(c[0]).includes('migrated'))).toHaveLength(0);
      expect((await again.load('acme')).nodesIn().map((n) => n.id)).toEqual(['n1', 'n3', 'n4', 'n5', 'n6', 'n7']);
    } finally {
      await again.close();
    }
  });
});

const rank = (s: string): number => ['batch', 'space', 'node'].indexOf(s.split(':')[0]!);
