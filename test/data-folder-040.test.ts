// A data folder as release 0.4.0 left it (storage layout 1: no Space table, no layout file) opens with this
// release: migrated once, with one log line, every row read back, its spaces' first writers found. A folder
// of a newer layout is refused with a message saying what to run. The old folder is made here with 0.4.0's
// schema, written out below, so the test does not depend on today's.
import kuzu from 'kuzu';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Ledger } from '../storage/log/ledger.ts';

const SCHEMA_040 = [
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
];

const T = Date.UTC(2025, 0, 1) * 1000;
const OPEN_END = Number.MAX_SAFE_INTEGER; // the stored open end of a validity interval
/** Text cells were stored JSON-encoded by 0.4.0 as they are now. */
const enc = (s: string): string => `'${JSON.stringify(s).replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

async function makeFolder040(dataDir: string): Promise<void> {
  mkdirSync(join(dataDir, 'graph'), { recursive: true });
  const db = new kuzu.Database(join(dataDir, 'graph', 'graph.kuzu'));
  const conn = new kuzu.Connection(db);
  const run = async (q: string): Promise<void> => {
    const r = await conn.query(q);
    (Array.isArray(r) ? r : [r]).forEach((x) => x.close());
  };
  for (const ddl of SCHEMA_040) await run(ddl);
  const rows: [number, string, string, string][] = [
    [1, 'acme', 'n1', 'user:1'],
    [2, 'acme', 'n2', 'user:1'],
    [3, 'acme', 'n3', 'user:2'],
    [4, 'beta', 'n4', 'svc:shared'],
    [5, 'acme', 'n5', 'svc:shared'],
  ];
  for (const [seq, tenant, id, space] of rows)
    await run(
      `CREATE (:Block {seq: ${seq}, tenant: ${enc(tenant)}, id: ${enc(id)}, space: ${enc(space)}, kind: ${enc('claim')}, ` +
        `statement: ${enc(`statement ${id}`)}, payload: ${enc('{}')}, asserted_at: ${T + seq}, valid_from: ${T + seq}, ` +
        `valid_to: ${OPEN_END}, captured_at: ${T + seq}, known_at: ${T + seq}, hash: ${enc(String(seq).padStart(64, '0'))}})`,
    );
  await conn.close();
  await db.close();
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'folder-040-'));
});
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

describe('a data folder of 0.4.0', () => {
  it('is migrated once, with one log line, and reads back', async () => {
    const dataDir = join(dir, 'data');
    await makeFolder040(dataDir);
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const ledger = await Ledger.open(dataDir);
    const migrations = log.mock.calls.filter((c) => String(c[0]).includes('migrated once from the 0.4.0 layout'));
    expect(migrations).toHaveLength(1);
    expect(String(migrations[0]?.[0])).toContain('first writers of 3 spaces');
    expect(await ledger.firstWriterOf('svc:shared')).toBe('beta');
    expect(await ledger.firstWriterOf('user:1')).toBe('acme');
    expect(await ledger.firstWriterOf('user:3')).toBeNull();
    const view = await ledger.load('acme');
    expect(view.nodesIn('user:1').map((n) => n.id)).toEqual(['n1', 'n2']);
    // New writes after the migration: a new space gets its first writer, an old one keeps its own.
    await ledger.write('acme', { space: 'user:3', nodes: [{ id: 'n6', kind: 'claim', statement: 'new' }], edges: [] });
    await ledger.write('acme', { space: 'svc:shared', nodes: [{ id: 'n7', kind: 'claim', statement: 'new' }], edges: [] });
    await ledger.close();

    log.mockClear();
    const again = await Ledger.open(dataDir);
    try {
      expect(log.mock.calls.filter((c) => String(c[0]).includes('migrated'))).toHaveLength(0);
      expect(await again.firstWriterOf('user:3')).toBe('acme');
      expect(await again.firstWriterOf('svc:shared')).toBe('beta');
      expect((await again.load('acme')).nodesIn().map((n) => n.id)).toEqual(['n1', 'n2', 'n3', 'n5', 'n6', 'n7']);
    } finally {
      await again.close();
    }
  });

  it('refuses a folder of a newer layout, saying what to run', async () => {
    const dataDir = join(dir, 'data');
    const ledger = await Ledger.open(dataDir);
    await ledger.close();
    writeFileSync(join(dataDir, 'graph', 'layout'), '9');
    await expect(Ledger.open(dataDir)).rejects.toThrow(/layout 9, written by a newer release.*run that release/);
  });
});
