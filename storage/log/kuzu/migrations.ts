// The storage layout of the graph store's folder, and the migrations from older layouts, each run once on
// open, one step per layout; with them the rebuilds of the derived indexes (by space, by id), which a copy
// failing on a missing key also uses (KuzuGraph's #copyRepairing). Statements run through the store's own
// connections and copy path (MigrationStore), so no engine state lives here.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { identKey } from '../../commit-group.ts';
import type { EdgeRecord, SpaceRow } from '../../types.ts';
import { tableRows, type TableRows } from './table-rows.ts';
import { syncDir } from './write-journal.ts';
import {
  BATCH,
  cypherString,
  ddlOf,
  decodeInt,
  decodeText,
  EDGE,
  HOLDS,
  HOLDS_BLOCK,
  HOLDS_EDGE,
  HOLDS_INVALIDATION,
  i64,
  IDENT,
  IDENT_IN,
  identPairKey,
  identsOf,
  int,
  INVALIDATION,
  keyColumn,
  NODE,
  ROW_TABLES,
  SCHEMA,
  SPACE,
  str,
  TENANT_SPACE,
  text,
  uniqueIdents,
  type Column,
  type HoldsRow,
  type TableSpec,
} from './tables.ts';

/**
 * The storage layout this release writes, recorded in the store's folder: 1 (0.4.0, no file) had no Space
 * table, 2 no tseq column. An older layout is migrated on open, one step per layout; a newer one is refused.
 */
export const LAYOUT = 5;
/** The first layout whose tables carry tseq. */
const LAYOUT_TSEQ = 3;
/** The first layout with TenantSpace and the Holds relationships. */
const LAYOUT_HOLDS = 4;
/** The first layout with the Ident index (which spaces hold an id). */
const LAYOUT_IDENT = 5;
/** Rows read per page while a migration indexes them. */
const MIGRATE_PAGE = 100_000;
const LAYOUT_FILE = 'layout';

/** What a migration asks of the graph store. */
export interface MigrationStore {
  /** The store's folder, for the log lines. */
  readonly dir: string;
  /** One statement on the writer connection, or a read on the reader. */
  run(on: 'writer' | 'reader', statement: string): Promise<Record<string, unknown>[]>;
  /** The rows of `spec`'s table that `where` (on `x`) admits, in seq order, at most `limit`. */
  select<R, T = R>(spec: TableSpec<R>, where: string, decode: (row: Record<string, unknown>) => T, limit?: number): Promise<T[]>;
  /** The parts in one write transaction, through the store's copy path. */
  commitCopy(parts: TableRows[]): Promise<void>;
  /** `fn` in the writer's turn: nothing else reads or writes the engine meanwhile. */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  /** Forgets the keys of an index this process remembers as stored: that index is being built again. */
  forget(index: 'spaces' | 'idents'): void;
}

/** The layout the folder records (null: none, a new folder or one of 0.4.0). */
export function writtenLayout(dir: string): number | null {
  const file = join(dir, LAYOUT_FILE);
  return existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : null;
}

/** Why a folder of `written` layout is refused (a newer release wrote it), or null. */
export function refusedLayout(dir: string, written: number | null): string | null {
  if (written === null || written <= LAYOUT) return null;
  return (
    `the data folder ${dir} has storage layout ${String(written)}, written by a newer release than this one ` +
    `(layout ${LAYOUT}): run that release on it, or restore a copy made before the upgrade`
  );
}

/**
 * The tables this release uses created, and a folder of an older layout migrated to this one, then the
 * layout recorded. `drain` copies the write journal in: after the columns it writes exist, before the
 * migrations read the rows.
 */
export async function upgradeLayout(store: MigrationStore, written: number | null, drain: () => Promise<void>): Promise<void> {
  const before = new Set((await store.run('writer', 'CALL show_tables() RETURN name')).map((r) => String(r.name)));
  for (const ddl of SCHEMA) await store.run('writer', ddl);
  // Existing rows of layout 1 or 2: tseq is added (empty) before the journal is copied in, since the
  // journal's rows are copied with this release's columns (journalParts fills tseq for older records).
  const fillTseq = before.has(NODE.table) && (written === null || written < LAYOUT_TSEQ);
  if (fillTseq) await addTseqColumns(store);
  await drain();
  // No layout file: a new folder, or one of 0.4.0 (layout 1), whose spaces have no Space rows yet.
  const from = written ?? (before.has(NODE.table) ? 1 : LAYOUT);
  if (from < 2) await migrateSpaces(store);
  if (fillTseq) await migrateTseq(store);
  if (from < LAYOUT_HOLDS) await migrateHolds(store, from);
  if (from < LAYOUT_IDENT) await migrateIdents(store, from);
  if (written !== LAYOUT) {
    // The migration into the data file before the layout says it is done: a WAL the engine crashes on is
    // set aside on open (./store-repair.ts), and a migration only in it would be lost under a newer layout.
    await store.run('writer', 'CHECKPOINT');
    writeFileSync(join(store.dir, LAYOUT_FILE), String(LAYOUT), { flush: true });
    syncDir(store.dir);
  }
}

/**
 * Layouts before 4 to 4: every node and edge row held by its space, every invalidation by the spaces
 * holding a version of its node, read page by page, once. The relationships are dropped first, so a
 * migration a crash interrupted starts again clean (the layout file is written only after it ends).
 */
async function migrateHolds(store: MigrationStore, from: number): Promise<void> {
  const t0 = performance.now();
  await store.exclusive(async () => {
    const { rows, invalidations } = await rebuildHolds(store);
    console.error(
      `data folder: migrated once from storage layout ${from} to ${LAYOUT_HOLDS}: ${rows} node and edge rows and ` +
        `${invalidations} invalidations indexed by space in ${Math.round(performance.now() - t0)} ms (${store.dir})`,
    );
  });
}

/**
 * The index by space (TenantSpace rows and their Holds relationships) and the index by id, dropped with
 * every key they held and built again from the stored rows (see KuzuGraph's #copyRepairing).
 */
export async function rebuildSpaceIndexes(store: MigrationStore): Promise<string> {
  for (const table of [IDENT_IN.table, ...HOLDS.map((h) => h.table), TENANT_SPACE.table])
    await store.run('writer', `DROP TABLE IF EXISTS ${table}`);
  await store.run('writer', ddlOf(TENANT_SPACE.table));
  store.forget('spaces'); // and rebuildIdents the ids'
  const { rows, invalidations } = await rebuildHolds(store);
  const pairs = await rebuildIdents(store);
  return `${rows} node and edge rows and ${invalidations} invalidations by space; ${pairs}`;
}

/** The Holds relationships dropped and built again from the stored rows, with the TenantSpace rows they need. */
async function rebuildHolds(store: MigrationStore): Promise<{ rows: number; invalidations: number }> {
  for (const h of HOLDS) {
    await store.run('writer', `DROP TABLE IF EXISTS ${h.table}`);
    await store.run('writer', ddlOf(h.table));
  }
  // A row's number, tenant and space, and the node ids it names (a node's id, an edge's two ends, an
  // invalidation's target): an invalidation is held by every space whose rows name its node.
  interface Placed {
    seq: number;
    tenant: string;
    space: string;
    ids: string[];
  }
  const column = (name: string): Column<Placed> => text(name, () => null);
  const base = [int<Placed>('seq', (r) => r.seq), column('tenant'), column('space')];
  const decodeWith =
    (names: string[]) =>
    (r: Record<string, unknown>): Placed => ({
      seq: i64(r, 'seq'),
      tenant: str(r, 'tenant'),
      space: str(r, 'space'),
      ids: names.map((n) => str(r, n)),
    });
  const invalidations = await store.select(
    { table: INVALIDATION.table, columns: [...base, column('target_id')] },
    '',
    decodeWith(['target_id']),
  );
  const spacesOf = new Map<string, Set<string>>(invalidations.map((i) => [identKey(i.tenant, i.ids[0]!), new Set([i.space])]));
  let rows = 0;
  for (const [spec, rel, names] of [
    [NODE, HOLDS_BLOCK, ['id']],
    [EDGE, HOLDS_EDGE, ['source_id', 'target_id']],
  ] as const) {
    const columns = [...base, ...names.map(column)];
    for (let after = 0; ;) {
      const page = await store.select({ table: spec.table, columns }, `WHERE x.seq > ${after}`, decodeWith([...names]), MIGRATE_PAGE);
      if (page.length === 0) break;
      after = page[page.length - 1]!.seq;
      for (const r of page) for (const id of r.ids) spacesOf.get(identKey(r.tenant, id))?.add(r.space);
      const pairs = new Map(page.map((r) => [identKey(r.tenant, r.space), { tenant: r.tenant, space: r.space }]));
      await store.commitCopy([tableRows(TENANT_SPACE, [...pairs.values()]), tableRows(rel, page)]);
      rows += page.length;
    }
  }
  const held: HoldsRow[] = invalidations.flatMap((i) =>
    [...(spacesOf.get(identKey(i.tenant, i.ids[0]!)) ?? [])].map((space) => ({ tenant: i.tenant, space, seq: i.seq })),
  );
  const pairs = new Map(held.map((r) => [identKey(r.tenant, r.space), { tenant: r.tenant, space: r.space }]));
  await store.commitCopy([tableRows(TENANT_SPACE, [...pairs.values()]), tableRows(HOLDS_INVALIDATION, held)].filter((p) => p.count > 0));
  return { rows, invalidations: invalidations.length };
}

/**
 * Layouts before 5 to 5: every (id, space) pair the node and edge rows name, read page by page, once.
 * The index is dropped first, so a migration a crash interrupted starts again clean.
 */
async function migrateIdents(store: MigrationStore, from: number): Promise<void> {
  const t0 = performance.now();
  await store.exclusive(async () => {
    const pairs = await rebuildIdents(store);
    console.error(
      `data folder: migrated once from storage layout ${from} to ${LAYOUT_IDENT}: ${pairs} (id, space) pairs indexed ` +
        `in ${Math.round(performance.now() - t0)} ms (${store.dir})`,
    );
  });
}

/** The index by id (Ident rows and their IdentIn relationships) dropped and built again from the stored rows. */
export async function rebuildIdents(store: MigrationStore): Promise<number> {
  await store.run('writer', `DROP TABLE IF EXISTS ${IDENT_IN.table}`);
  await store.run('writer', `DROP TABLE IF EXISTS ${IDENT.table}`);
  store.forget('idents');
  for (const table of [IDENT.table, IDENT_IN.table]) await store.run('writer', ddlOf(table));
  // Pairs written so far: a page repeating one (an id written again in its space) skips it.
  const written = new Set<string>();
  let pairs = 0;
  const col = (name: string): Column<unknown> => (name === 'seq' ? int(name, () => null) : text(name, () => null));
  for (const [table, names] of [
    [NODE.table, ['id']],
    [EDGE.table, ['source_id', 'target_id']],
  ] as const) {
    const columns = ['seq', 'tenant', 'space', ...names].map(col);
    for (let after = 0; ;) {
      // Decoded as each row is parsed (the parser hands every row in the same object).
      const page = await store.select(
        { table, columns },
        `WHERE x.seq > ${after}`,
        (r) => ({ seq: i64(r, 'seq'), tenant: str(r, 'tenant'), space: str(r, 'space'), ids: names.map((n) => str(r, n)) }),
        MIGRATE_PAGE,
      );
      if (page.length === 0) break;
      after = page[page.length - 1]!.seq;
      // Each named id as a self-edge of its space: identsOf reads only tenant, ends and space.
      const named = page.flatMap((r) =>
        r.ids.map((id) => ({ tenant: r.tenant, source_id: id, target_id: id, space: r.space }) as EdgeRecord),
      );
      const rows = identsOf({ nodes: [], edges: named }, written);
      for (const r of rows) written.add(identPairKey(r));
      await store.commitCopy([tableRows(IDENT, uniqueIdents(rows)), tableRows(IDENT_IN, rows)].filter((p) => p.count > 0));
      pairs += rows.length;
    }
  }
  return pairs;
}

/** Layout 2 to 3, first part: the tseq column on every table, empty. */
async function addTseqColumns(store: MigrationStore): Promise<void> {
  for (const { table } of ROW_TABLES) await store.run('writer', `ALTER TABLE ${table} ADD IF NOT EXISTS tseq INT64`);
}

/**
 * Layout 2 to 3: every row's tseq, from one pass per table, once. A row's is its seq (it was written
 * here); a batch's and a space's is that of the first row naming it, so an export places it just before.
 */
async function migrateTseq(store: MigrationStore): Promise<void> {
  const t0 = performance.now();
  await store.exclusive(async () => {
    for (const { table } of ROW_TABLES)
      if (keyColumn({ table }) === 'seq') await store.run('writer', `MATCH (x:${table}) WHERE x.tseq IS NULL SET x.tseq = x.seq`);
    const firstOf = async (tables: string[], column: string): Promise<Map<string, number>> => {
      const first = new Map<string, number>();
      for (const table of tables)
        for (const r of await store.run(
          'reader',
          `MATCH (x:${table}) WHERE x.${column} IS NOT NULL RETURN x.tenant AS t, x.${column} AS c, min(x.tseq) AS s`,
        )) {
          const k = identKey(decodeText(r.t) ?? '', decodeText(r.c) ?? '');
          first.set(k, Math.min(first.get(k) ?? Number.POSITIVE_INFINITY, decodeInt(r.s)));
        }
      return first;
    };
    const byBatch = await firstOf([NODE.table, EDGE.table, INVALIDATION.table], 'batch_id');
    const bySpace = await firstOf([NODE.table, EDGE.table], 'space');
    const batches = await store.run('reader', `MATCH (x:${BATCH.table}) WHERE x.tseq IS NULL RETURN x.key AS k`);
    const spaces = await store.run('reader', `MATCH (x:${SPACE.table}) WHERE x.tseq IS NULL RETURN x.name AS k, x.tenant AS t`);
    // Keys as stored (JSON-encoded text), so the SET matches them without decoding.
    const set = async (table: string, key: string, rows: { k: string; t: number }[]): Promise<void> => {
      for (let i = 0; i < rows.length; i += 500) {
        const list = rows
          .slice(i, i + 500)
          .map((r) => `{k: ${cypherString(r.k)}, t: ${Math.trunc(r.t)}}`)
          .join(', ');
        await store.run('writer', `UNWIND [${list}] AS r MATCH (x:${table}) WHERE x.${key} = r.k SET x.tseq = r.t`);
      }
    };
    // None names it (not written by this release's planners): first in the tenant's export order.
    const orFirst = (n: number | undefined): number => (n === undefined || !Number.isFinite(n) ? 1 : n);
    await set(
      BATCH.table,
      'key',
      batches.map((r) => {
        const key = decodeText(r.k) ?? '';
        return { k: String(r.k), t: orFirst(byBatch.get(key)) };
      }),
    );
    await set(
      SPACE.table,
      'name',
      spaces.map((r) => ({ k: String(r.k), t: orFirst(bySpace.get(identKey(decodeText(r.t) ?? '', decodeText(r.k) ?? ''))) })),
    );
    console.error(
      `data folder: migrated once to layout ${LAYOUT_TSEQ}: per-tenant sequence numbers (tseq) given to every row ` +
        `in ${Math.round(performance.now() - t0)} ms (${store.dir})`,
    );
  });
}

/** Layout 1 (0.4.0) to 2: a Space row for every space written, from one scan, once. */
async function migrateSpaces(store: MigrationStore): Promise<void> {
  const t0 = performance.now();
  await store.exclusive(async () => {
    const have = new Set((await store.run('reader', 'MATCH (x:Space) RETURN x.name AS name')).map((r) => decodeText(r.name)));
    const rows = (await scanSpaceWriters(store)).filter((r) => !have.has(r.space));
    await store.commitCopy([tableRows(SPACE, rows)].filter((p) => p.count > 0));
    console.error(
      `data folder: migrated once from the 0.4.0 layout: the first writers of ${rows.length} spaces indexed ` +
        `in ${Math.round(performance.now() - t0)} ms (${store.dir})`,
    );
  });
}

/** Each space with the first tenant that wrote a node or edge to it, scanned: only a migration does this. */
async function scanSpaceWriters(store: MigrationStore): Promise<SpaceRow[]> {
  const first = new Map<string, SpaceRow>();
  for (const table of [NODE.table, EDGE.table]) {
    for (const r of await store.run(
      'reader',
      `MATCH (x:${table}) RETURN x.space AS space, x.tenant AS tenant, min(x.captured_at) AS first, min(x.seq) AS s`,
    )) {
      const row = {
        space: decodeText(r.space) ?? '',
        tenant: decodeText(r.tenant) ?? '',
        first_captured_at: decodeInt(r.first),
        tseq: decodeInt(r.s),
      };
      const seen = first.get(row.space);
      if (!seen || row.first_captured_at < seen.first_captured_at) first.set(row.space, row);
    }
  }
  return [...first.values()];
}
