// An exact copy of one tenant between servers (the operator routes under /admin): rows leave with every
// stored column but this server's own seq, in tseq order with all tables interleaved, and are stored on
// the other side with the same tseq, instants and hashes. A prefix of the order is always consistent: a
// batch and a space's first-writer row come just before the first row naming them (their tseq is that
// row's, and they rank first among equal tseq), every other row after what it refers to.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { emptyGroup, type CommitGroup } from '../commit-group.ts';
import type { Ledger } from './ledger.ts';
import { EDGE_TYPES, POLICIES, type BatchRow, type Declaration, type EdgeRecord, type Invalidation } from '../types.ts';
import type { NodeVersion, SpaceRow, Verdict } from '../types.ts';

const int = z.number().int().safe();
const text = z.string();
/** Exports page after a tseq, from 0: every row's is at least 1. */
const tseq = int.min(1);
const maybe = <T extends z.ZodType>(t: T) => t.nullable();

/** Each table's exported columns, in the stored order (seq, the server's own number, left out). */
const SCHEMAS = {
  batch: z.strictObject({
    table: z.literal('batch'),
    tenant: text,
    id: text,
    declared_captured_at: int,
    reason: text,
    captured_at: int,
    tseq,
  }),
  space: z.strictObject({ table: z.literal('space'), space: text, tenant: text, first_captured_at: int, tseq }),
  node: z.strictObject({
    table: z.literal('node'),
    tenant: text,
    id: text,
    space: text,
    kind: text,
    statement: maybe(text),
    category: maybe(text),
    payload: text,
    asserted_at: int,
    valid_from: int,
    valid_to: int,
    captured_at: int,
    known_at: int,
    batch_id: maybe(text),
    fact_key: maybe(text),
    fact_value: maybe(text),
    hash: text,
    tseq,
  }),
  edge: z.strictObject({
    table: z.literal('edge'),
    tenant: text,
    source_id: text,
    target_id: text,
    edge_type: z.enum(EDGE_TYPES as [EdgeRecord['edge_type'], ...EdgeRecord['edge_type'][]]),
    confidence: maybe(z.number()),
    lag: maybe(text),
    mechanism: maybe(text),
    space: text,
    asserted_at: int,
    valid_from: int,
    valid_to: int,
    captured_at: int,
    known_at: int,
    batch_id: maybe(text),
    hash: text,
    tseq,
  }),
  declaration: z.strictObject({
    table: z.literal('declaration'),
    tenant: text,
    fact_key: text,
    key_fields: z.array(text),
    policy: z.enum(POLICIES as [Declaration['policy'], ...Declaration['policy'][]]),
    source_order: maybe(z.array(text)),
    declared_at: int,
    tseq,
  }),
  verdict: z.strictObject({
    table: z.literal('verdict'),
    tenant: text,
    fact_key: text,
    target_id: maybe(text),
    value: maybe(text),
    outcome: text,
    method: text,
    ruleset: text,
    resolver: text,
    decided_at: int,
    known_at: int,
    space: maybe(text),
    hash: text,
    tseq,
  }),
  invalidation: z.strictObject({
    table: z.literal('invalidation'),
    tenant: text,
    target_id: text,
    space: text,
    reason: text,
    by: maybe(text),
    invalidated_at: int,
    known_at: int,
    batch_id: maybe(text),
    tseq,
  }),
} as const;

export const TenantRowSchema = z.discriminatedUnion('table', [
  SCHEMAS.batch,
  SCHEMAS.space,
  SCHEMAS.node,
  SCHEMAS.edge,
  SCHEMAS.declaration,
  SCHEMAS.verdict,
  SCHEMAS.invalidation,
]);
export type TenantRow = z.infer<typeof TenantRowSchema>;
export type TableName = TenantRow['table'];

/** Among rows of equal tseq: a batch, then a space, before the row naming them. */
const RANK: Record<TableName, number> = { batch: 0, space: 1, node: 2, edge: 3, declaration: 4, verdict: 5, invalidation: 6 };
export const byTseq = (a: TenantRow, b: TenantRow): number => a.tseq - b.tseq || RANK[a.table] - RANK[b.table];

/** Each table's exported columns, listed once (a schema's shape is rebuilt on every access). */
const COLUMNS = Object.fromEntries(
  Object.entries(SCHEMAS).map(([table, schema]) => [table, Object.keys(schema.shape).filter((k) => k !== 'table')]),
) as Record<TableName, string[]>;

/** A stored row as exported: `table` first, then its columns in the schema's order, seq left out. */
function portable<T extends TableName>(table: T, row: object): Extract<TenantRow, { table: T }> {
  const source = row as Record<string, unknown>;
  const out: Record<string, unknown> = { table };
  for (const key of COLUMNS[table]) out[key] = source[key];
  return out as Extract<TenantRow, { table: T }>;
}

/** A row's exported text: the digest's line, and what two copies of a row are compared by. */
const canonical = (r: TenantRow): string => JSON.stringify(portable(r.table, r));

/** A stored group's rows as exported, in tseq order. */
export function portableRows(group: CommitGroup): TenantRow[] {
  const rows: TenantRow[] = [
    ...group.batches.map((r) => portable('batch', r)),
    ...group.spaces.map((r) => portable('space', r)),
    ...group.nodes.map((r) => portable('node', r)),
    ...group.edges.map((r) => portable('edge', r)),
    ...group.declarations.map((r) => portable('declaration', r)),
    ...group.verdicts.map((r) => portable('verdict', r)),
    ...group.invalidations.map((r) => portable('invalidation', r)),
  ];
  return rows.sort(byTseq);
}

/** Exported rows as a commit group to store; seq 0 until the ledger numbers them. */
export function storedGroup(rows: readonly TenantRow[]): CommitGroup {
  const g = emptyGroup();
  for (const r of rows) {
    const { table, ...cols } = r;
    switch (table) {
      case 'batch':
        g.batches.push(cols as BatchRow);
        break;
      case 'space':
        g.spaces.push(cols as SpaceRow);
        break;
      case 'node':
        g.nodes.push({ seq: 0, ...cols } as NodeVersion);
        break;
      case 'edge':
        g.edges.push({ seq: 0, ...cols } as EdgeRecord);
        break;
      case 'declaration':
        g.declarations.push({ seq: 0, ...cols } as Declaration);
        break;
      case 'verdict':
        g.verdicts.push({ seq: 0, ...cols } as Verdict);
        break;
      case 'invalidation':
        g.invalidations.push({ seq: 0, ...cols } as Invalidation);
        break;
    }
  }
  return g;
}

/** How a row is named in a conflict: its table, tseq and identity. */
export function rowName(r: TenantRow): string {
  const id =
    r.table === 'node' || r.table === 'batch'
      ? r.id
      : r.table === 'space'
        ? r.space
        : r.table === 'edge'
          ? `${r.source_id} ${r.edge_type} ${r.target_id}`
          : r.table === 'invalidation'
            ? r.target_id
            : r.fact_key;
  return `${r.table} ${JSON.stringify(id)} at tseq ${r.tseq}`;
}

export interface ExportPage {
  tenant: string;
  rows: TenantRow[];
  /** The tseq to ask the next page after, or null when this page reached `last_tseq`. */
  next_after: number | null;
  /** The tenant's highest tseq when the page was read (bounded by up_to when given). */
  last_tseq: number;
}

/**
 * One page: the tenant's rows with tseq above `after` (and at most `upTo`), at most `limit` of them but
 * never splitting rows of one tseq (a batch or space row goes with the row naming it: up to two more).
 * Read from the store, `limit` + 2 rows per table at most.
 */
export async function exportPage(ledger: Ledger, tenant: string, after: number, limit: number, upTo = Infinity): Promise<ExportPage> {
  const last = Math.min(await ledger.tenantLastTseq(tenant), upTo);
  const merged = portableRows(await ledger.tenantRows(tenant, after, upTo, limit + 2));
  // Each table gave up to limit + 2 rows in tseq order; the first limit + 2 of the merge are complete.
  let n = Math.min(limit, merged.length);
  while (n > 0 && n < merged.length && merged[n]!.tseq === merged[n - 1]!.tseq) n++;
  const rows = merged.slice(0, n);
  const top = rows.at(-1)?.tseq ?? null;
  return { tenant, rows, next_after: top !== null && top < last ? top : null, last_tseq: last };
}

/** Rows per page when a digest or a check walks the whole tenant: each page scans every table once. */
const WALK_PAGE = 20_000;

/**
 * A digest of the tenant's rows with tseq above `from` and up to `upTo`, in export order, over the exported
 * columns only: equal on two servers exactly when their copies of that range are. A range lets a move
 * check the rows copied while writable before it freezes, and only the tail while frozen.
 */
export async function tenantDigest(
  ledger: Ledger,
  tenant: string,
  upTo = Infinity,
  from = 0,
): Promise<{ tenant: string; after: number; up_to: number; rows: number; digest: string }> {
  const h = createHash('sha256');
  let rows = 0;
  let after = from;
  let last = 0;
  for (;;) {
    const page = await exportPage(ledger, tenant, after, WALK_PAGE, upTo);
    last = page.last_tseq;
    for (const r of page.rows) h.update(canonical(r)).update('\n');
    rows += page.rows.length;
    if (page.next_after === null) break;
    after = page.next_after;
  }
  return { tenant, after: from, up_to: Number.isFinite(upTo) ? upTo : last, rows, digest: `sha256:${h.digest('hex')}` };
}

export class ImportConflict extends Error {
  constructor(
    message: string,
    readonly row: TenantRow,
  ) {
    super(message);
  }
}

/** Imports run one at a time: each checks what the tenant holds, then stores the rest. */
let importing: Promise<unknown> = Promise.resolve();

/**
 * Per ledger and tenant, the last row an import stored and the tenant's mark (Ledger.tenantMark) before
 * it. While the mark is unchanged nothing but imports wrote the tenant, so the next page is checked
 * against this row instead of the store: a read of the store first copies the write journal into the
 * engine, and a page per copy held imports to ~2-3k rows/s where the journal, copied in the background
 * in larger groups, takes them at several times that (docs/cluster.md).
 */
const tails = new WeakMap<Ledger, Map<string, { row: TenantRow; mark: number }>>();

/**
 * Stores `rows` of `tenant` as given (each row's tenant is checked by the caller). A row whose tseq the
 * tenant holds is compared and skipped when equal; one that differs, one below the tenant's last tseq
 * that it lacks (a gap: the copy would not keep the source's order), or a space whose first writer here
 * is another row, is an ImportConflict, and nothing of the call is stored.
 */
export function importTenantRows(
  ledger: Ledger,
  tenant: string,
  rows: readonly TenantRow[],
): Promise<{ stored: number; skipped: number; last_tseq: number }> {
  const run = importing.then(() => importNow(ledger, tenant, rows));
  importing = run.catch(() => undefined);
  return run;
}

async function importNow(
  ledger: Ledger,
  tenant: string,
  given: readonly TenantRow[],
): Promise<{ stored: number; skipped: number; last_tseq: number }> {
  const rows = [...given].sort(byTseq);
  const mark = ledger.tenantMark(tenant);
  let known = tails.get(ledger);
  if (!known) tails.set(ledger, (known = new Map()));
  const tail = known.get(tenant);
  // Forgotten until this import is decided: a failed one may have stored its rows or not.
  known.delete(tenant);
  const trusted = tail !== undefined && tail.mark === mark;
  const last = trusted ? tail.row.tseq : await ledger.tenantLastTseq(tenant);
  // The tenant's last row here, by (tseq, table): a page may end between a space row and the row it
  // shares its tseq with, so the next page's first row can carry the last tseq and still be new.
  const lastRow = trusted
    ? tail.row
    : last > 0
      ? ((await exportPage(ledger, tenant, last - 1, WALK_PAGE, last)).rows.at(-1) ?? null)
      : null;
  const isNew = (r: TenantRow): boolean => lastRow === null || byTseq(r, lastRow) > 0;
  const held = new Map<string, TenantRow>();
  const key = (r: TenantRow): string => `${r.table}\u001f${r.tseq}`;
  const overlap = rows.filter((r) => !isNew(r) && r.table !== 'space');
  if (overlap.length > 0) {
    const lo = overlap[0]!.tseq;
    const hi = overlap.at(-1)!.tseq;
    let after = lo - 1;
    for (;;) {
      const page = await exportPage(ledger, tenant, after, WALK_PAGE, hi);
      for (const r of page.rows) held.set(key(r), r);
      if (page.next_after === null) break;
      after = page.next_after;
    }
  }
  const spaces = new Map((await ledger.spaceRows(rows.filter((r) => r.table === 'space').map((r) => r.space))).map((s) => [s.space, s]));
  const fresh: TenantRow[] = [];
  const seen = new Set<string>();
  for (const r of rows) {
    if (seen.has(key(r))) throw new ImportConflict(`the body holds ${rowName(r)} twice`, r);
    seen.add(key(r));
    const stored = r.table === 'space' ? spaces.get(r.space) : held.get(key(r));
    if (stored) {
      if (canonical(r.table === 'space' ? portable('space', stored) : (stored as TenantRow)) === canonical(r)) continue;
      throw new ImportConflict(
        r.table === 'space' && stored.tenant !== tenant
          ? `${rowName(r)}: this server already holds space ${JSON.stringify(r.space)}, first written by tenant ${JSON.stringify(stored.tenant)}`
          : `${rowName(r)} differs from the row stored here`,
        r,
      );
    }
    if (!isNew(r))
      throw new ImportConflict(
        `${rowName(r)} is not held here but the tenant already holds rows up to tseq ${last}: import in tseq order, after DELETE of a partial copy`,
        r,
      );
    fresh.push(r);
  }
  if (fresh.length > 0) await ledger.importRows(storedGroup(fresh));
  const lastTseq = fresh.reduce((top, r) => Math.max(top, r.tseq), last);
  const top = fresh.at(-1) ?? lastRow;
  if (top) known.set(tenant, { row: top, mark });
  return { stored: fresh.length, skipped: rows.length - fresh.length, last_tseq: lastTseq };
}
