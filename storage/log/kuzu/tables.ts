// The graph store's tables, written once: each table's columns (name, type, and how a row gives the
// cell), from which come the DDL, the CSV a copy stages, the journal's records and the rows decoded back
// from Kuzu's answers. Pure: nothing here touches the engine (kuzu-graph.ts does).
//
// Text columns hold JSON-encoded strings: the CSV then has one record per line whatever the text holds
// (newlines, NUL, quotes), and an empty string stays distinct from NULL (Kuzu reads `""` as NULL).
import { cellRows, checkCell, tableRows, type Cell, type Scalar, type TableRows } from './table-rows.ts';
import type { JournalRecord } from './write-journal.ts';
import type { BatchRow, Declaration, EdgeRecord, Invalidation, NodeVersion, SpaceRow, Verdict } from '../../types.ts';
import { emptyGroup, IDENT_SEP, identKey, idPlacements, type CommitGroup, type LoadedLedger } from '../../commit-group.ts';

/** An answer's row as Kuzu returns it: cells by column name (text still JSON-encoded). */
type Answer = Record<string, unknown>;

/**
 * One column: its name and type (the DDL, the CSV), how a row gives its cell (`get`), and how the cell
 * reads back into the row's field of the same name (`read`; null for a column derived from others).
 */
export interface Column<Row> {
  name: string;
  type: Scalar;
  get: (row: Row) => Cell;
  read: ((r: Answer) => unknown) | null;
  /** The row's field `read` fills, when it is not the column's name. */
  field?: string;
}

export interface TableSpec<Row> {
  table: string;
  columns: Column<Row>[];
}

/** Text that is never null; `optText` may be. */
export const text = <R>(name: string, get: (r: R) => string | null): Column<R> => ({ name, type: 'text', get, read: (r) => str(r, name) });
const optText = <R>(name: string, get: (r: R) => string | null): Column<R> => ({ name, type: 'text', get, read: (r) => t(r, name) });
export const int = <R>(name: string, get: (r: R) => number | null): Column<R> => ({ name, type: 'int', get, read: (r) => i64(r, name) });
const float = <R>(name: string, get: (r: R) => number | null): Column<R> => ({
  name,
  type: 'float',
  get,
  read: (r) => (typeof r[name] === 'number' ? r[name] : null),
});
/** A list held as its JSON text; `optional`: null when absent. */
const textList = <R>(name: string, get: (r: R) => readonly string[] | null, optional = false): Column<R> => ({
  name,
  type: 'text',
  get: (row) => {
    const list = get(row);
    return list ? JSON.stringify(list) : null;
  },
  read: (r) => (optional && r[name] === null ? null : (JSON.parse(str(r, name)) as string[])),
});
/** A column worked out from the row's other fields (a key): written, never read back. */
const derived = <R>(c: Column<R>): Column<R> => ({ ...c, read: null });
/** A column whose cell reads back into another field. */
const into = <R>(field: string, c: Column<R>): Column<R> => ({ ...c, field });

/**
 * The decoder of a table's rows from Kuzu's answer: every column read back into its field, in the order
 * the write path builds rows (write-plan.ts: `seq`, `tseq`, then the rest), so a row read back serializes
 * as the row written did.
 */
function decoder<R>(spec: TableSpec<R>): (r: Answer) => R {
  const numbered = spec.columns.some((c) => c.name === 'seq');
  const rank = (c: Column<R>): number => (c.name === 'seq' ? 0 : c.name === 'tseq' && numbered ? 1 : 2);
  const columns = [...spec.columns].sort((a, b) => rank(a) - rank(b)); // stable: the rest keep their order
  const read = columns.flatMap((c) => (c.read ? [[c.field ?? c.name, c.read] as const] : []));
  return (r) => {
    const row: Record<string, unknown> = {};
    for (const [field, get] of read) row[field] = get(r);
    return row as R;
  };
}

/** A node's or an edge's two clocks (asserted and valid; captured and known), in the same place in both tables. */
type Clocks = Pick<NodeVersion, 'asserted_at' | 'valid_from' | 'valid_to' | 'captured_at' | 'known_at'>;
const clockColumns = <R extends Clocks>(): Column<R>[] => [
  int('asserted_at', (r) => r.asserted_at),
  int('valid_from', (r) => r.valid_from),
  int('valid_to', (r) => r.valid_to),
  int('captured_at', (r) => r.captured_at),
  int('known_at', (r) => r.known_at),
];

export const BATCH: TableSpec<BatchRow> = {
  table: 'Batch',
  columns: [
    derived(text('key', (r) => identKey(r.tenant, r.id))),
    text('tenant', (r) => r.tenant),
    text('id', (r) => r.id),
    int('declared_captured_at', (r) => r.declared_captured_at),
    text('reason', (r) => r.reason),
    int('captured_at', (r) => r.captured_at),
    int('tseq', (r) => r.tseq),
  ],
};

export const NODE: TableSpec<NodeVersion> = {
  table: 'Block',
  columns: [
    int('seq', (r) => r.seq),
    text('tenant', (r) => r.tenant),
    text('id', (r) => r.id),
    text('space', (r) => r.space),
    text('kind', (r) => r.kind),
    optText('statement', (r) => r.statement),
    optText('category', (r) => r.category),
    text('payload', (r) => r.payload),
    ...clockColumns<NodeVersion>(),
    optText('batch_id', (r) => r.batch_id),
    optText('fact_key', (r) => r.fact_key),
    optText('fact_value', (r) => r.fact_value),
    text('hash', (r) => r.hash),
    int('tseq', (r) => r.tseq),
  ],
};

// Edges are rows of their own node table, not a Kuzu relationship: every read and walk is answered from
// the in-memory views, and COPY into a relationship table slows with its size (measured here: 300 ms per
// 1,000 rows at 0, 650 ms at 60k, several seconds at 100k, with the file growing to ~800 MB), while a
// node table stays flat.
export const EDGE: TableSpec<EdgeRecord> = {
  table: 'Edge',
  columns: [
    int('seq', (r) => r.seq),
    text('tenant', (r) => r.tenant),
    text('source_id', (r) => r.source_id),
    text('target_id', (r) => r.target_id),
    text('edge_type', (r) => r.edge_type),
    float('confidence', (r) => r.confidence),
    optText('lag', (r) => r.lag),
    optText('mechanism', (r) => r.mechanism),
    text('space', (r) => r.space),
    ...clockColumns<EdgeRecord>(),
    optText('batch_id', (r) => r.batch_id),
    text('hash', (r) => r.hash),
    int('tseq', (r) => r.tseq),
  ],
};

export const DECLARATION: TableSpec<Declaration> = {
  table: 'Declaration',
  columns: [
    int('seq', (r) => r.seq),
    text('tenant', (r) => r.tenant),
    text('fact_key', (r) => r.fact_key),
    textList('key_fields', (r) => r.key_fields),
    text('policy', (r) => r.policy),
    textList('source_order', (r) => r.source_order, true),
    int('declared_at', (r) => r.declared_at),
    int('tseq', (r) => r.tseq),
  ],
};

export const VERDICT: TableSpec<Verdict> = {
  table: 'Verdict',
  columns: [
    int('seq', (r) => r.seq),
    text('tenant', (r) => r.tenant),
    text('fact_key', (r) => r.fact_key),
    optText('target_id', (r) => r.target_id),
    optText('value', (r) => r.value),
    text('outcome', (r) => r.outcome),
    text('method', (r) => r.method),
    text('ruleset', (r) => r.ruleset),
    text('resolver', (r) => r.resolver),
    int('decided_at', (r) => r.decided_at),
    int('known_at', (r) => r.known_at),
    optText('space', (r) => r.space),
    text('hash', (r) => r.hash),
    int('tseq', (r) => r.tseq),
  ],
};

export const INVALIDATION: TableSpec<Invalidation> = {
  table: 'Invalidation',
  columns: [
    int('seq', (r) => r.seq),
    text('tenant', (r) => r.tenant),
    text('target_id', (r) => r.target_id),
    text('space', (r) => r.space),
    text('reason', (r) => r.reason),
    optText('by', (r) => r.by),
    int('invalidated_at', (r) => r.invalidated_at),
    int('known_at', (r) => r.known_at),
    optText('batch_id', (r) => r.batch_id),
    int('tseq', (r) => r.tseq),
  ],
};

// A space's first writer, keyed by the space's name: the MCP door's `svc:` spaces are opened by it, and a
// write to a space learns whether it is the first from one lookup in this key's index, so nothing about
// spaces is read at start-up. Written with the space's first rows, in the same transaction.
export const SPACE: TableSpec<SpaceRow> = {
  table: 'Space',
  columns: [
    into(
      'space',
      text('name', (r) => r.space),
    ),
    text('tenant', (r) => r.tenant),
    int('first_captured_at', (r) => r.first_captured_at),
    int('tseq', (r) => r.tseq),
  ],
};

// A space of one tenant (key: tenant + space), the source of the relationships below: the rows a space
// holds are found from it through a CSR adjacency list, not by scanning a table for the space's name
// (Kuzu 0.11.3 has no index but the primary key's). Written with the rows, in the same transaction, and
// loaded by copyFrom, as the Space table: a row for a pair the store holds is left out.
export interface SpaceKeyRow {
  tenant: string;
  space: string;
}
export const TENANT_SPACE: TableSpec<SpaceKeyRow> = {
  table: 'TenantSpace',
  columns: [text('key', (r) => identKey(r.tenant, r.space)), text('tenant', (r) => r.tenant), text('space', (r) => r.space)],
};

/** One row a space holds: a relationship from the space's TenantSpace row to the row's primary key. */
export interface HoldsRow {
  tenant: string;
  space: string;
  seq: number;
}
export const holds = (table: string, to: string): TableSpec<HoldsRow> & { to: string } => ({
  table,
  to,
  columns: [text('space_key', (r) => identKey(r.tenant, r.space)), int('row_seq', (r) => r.seq)],
});
// Both directions (Kuzu's default), though a read walks only from a space to its rows: Kuzu 0.11.3 cannot
// delete a node that a forward-only relationship table may point at ("Failed to get bwd data ... set the
// storage direction to BOTH"), even when none does, and a tenant's deletion (tenant-copy.ts) deletes its
// rows. The backward lists cost the copy ~20% more (docs/storage.md).
export const HOLDS_BLOCK = holds('HoldsBlock', 'Block');
export const HOLDS_EDGE = holds('HoldsEdge', 'Edge');
/** An invalidation is held by every space holding a version of its node: it retracts the id's every version. */
export const HOLDS_INVALIDATION = holds('HoldsInvalidation', 'Invalidation');
export const HOLDS = [HOLDS_BLOCK, HOLDS_EDGE, HOLDS_INVALIDATION];
export const isHolds = (table: string): boolean => HOLDS.some((h) => h.table === table);

// Which spaces of a tenant hold an id (a version of it, or an edge touching it), found by one primary-key
// lookup of the id's Ident row and its adjacency list (layout 5): a write of one space learns which other
// spaces' views it must plan against without loading the tenant, and without the scan spacesOfIds makes.
// Written with the rows, in the same transaction; Ident rows by copyFrom (a stored id is left out), IdentIn
// rows once per (id, space) pair as far as this process remembers (a repeat is harmless:
// a lookup returns each space once).
export interface IdentSpaceRow {
  tenant: string;
  id: string;
  space: string;
}
export const IDENT: TableSpec<Pick<IdentSpaceRow, 'tenant' | 'id'>> = {
  table: 'Ident',
  columns: [text('key', (r) => identKey(r.tenant, r.id)), text('tenant', (r) => r.tenant)],
};
export const IDENT_IN: TableSpec<IdentSpaceRow> & { to: string } = {
  table: 'IdentIn',
  to: 'TenantSpace',
  columns: [text('ident_key', (r) => identKey(r.tenant, r.id)), text('space_key', (r) => identKey(r.tenant, r.space))],
};
/** Relationship tables: a row is its two ends. */
export const isRel = (table: string): boolean => isHolds(table) || table === IDENT_IN.table;
/** Tables of the indexes by space and by id: not the ledger's rows, not counted as a commit's rows. */
export const isIndex = (table: string): boolean => isRel(table) || table === TENANT_SPACE.table || table === IDENT.table;

const KUZU_TYPE: Record<Scalar, string> = { text: 'STRING', int: 'INT64', float: 'DOUBLE', json: 'STRING' };

function nodeTableDdl<R>(spec: TableSpec<R>, pk: string): string {
  const cols = spec.columns.map((c) => `${c.name} ${KUZU_TYPE[c.type]}`).join(', ');
  return `CREATE NODE TABLE IF NOT EXISTS ${spec.table}(${cols}, PRIMARY KEY(${pk}))`;
}

export const SCHEMA = [
  nodeTableDdl(BATCH, 'key'),
  nodeTableDdl(NODE, 'seq'),
  nodeTableDdl(EDGE, 'seq'),
  nodeTableDdl(DECLARATION, 'seq'),
  nodeTableDdl(VERDICT, 'seq'),
  nodeTableDdl(INVALIDATION, 'seq'),
  nodeTableDdl(SPACE, 'name'),
  nodeTableDdl(TENANT_SPACE, 'key'),
  ...HOLDS.map((h) => `CREATE REL TABLE IF NOT EXISTS ${h.table}(FROM TenantSpace TO ${h.to}, MANY_MANY)`),
  nodeTableDdl(IDENT, 'key'),
  `CREATE REL TABLE IF NOT EXISTS ${IDENT_IN.table}(FROM ${IDENT.table} TO ${IDENT_IN.to}, MANY_MANY)`,
];
/** The statement of SCHEMA that creates `table`. */
export const ddlOf = (table: string): string => {
  const ddl = SCHEMA.find((d) => d.includes(`TABLE IF NOT EXISTS ${table}(`));
  if (!ddl) throw new Error(`no table ${table} in the schema`);
  return ddl;
};
/** Kuzu's refusal of a relationship whose end is not in its table (see #copyRepairing). */
export const MISSING_KEY = /Unable to find primary key value/;

function csvCell(cell: Cell, type: Scalar): string {
  // A cell left undefined is stored as the journal stores it (JSON writes null), so a copy from memory and
  // a copy replayed from the journal agree, and such a cell can never fail every copy until a restart.
  const value = cell ?? null;
  checkCell(value, type);
  if (value === null) return '';
  if (type !== 'text' && type !== 'json') return String(value);
  // Text with no quote, backslash, control character or surrogate JSON-encodes to itself between quotes:
  // skip the encoder and the quote doubling (a large share of a 1,000-row import's CSV staging).
  if (typeof value === 'string' && !NEEDS_JSON_ESCAPE.test(value)) return `"""${value}"""`;
  return `"${JSON.stringify(value).replace(/"/g, '""')}"`;
}

const NEEDS_JSON_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** The CSV dialect toCsv writes, as Kuzu's COPY FROM and LOAD FROM are told it (no header row). */
export const CSV_OPTIONS = `header=false, quote='"', escape='"', parallel=false`;

export function toCsv(part: TableRows): string {
  let out = '';
  for (const cells of part.cells()) out += cells.map((v, i) => csvCell(v, part.columns[i]?.type ?? 'text')).join(',') + '\n';
  return out;
}

/** A Cypher string literal holding `text` exactly: backslashes and single quotes escaped. */
export function cypherString(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * Records of a CSV that Kuzu's COPY TO wrote: one per line; a cell is empty (null), a number, or quoted
 * with doubled quotes inside (a text cell, whose content is the JSON encoding of the text).
 */
export function parseCsvRows<T = Record<string, unknown>>(
  text: string,
  columns: readonly Pick<Column<unknown>, 'name' | 'type'>[],
  decode?: (row: Readonly<Record<string, unknown>>) => T,
): T[] {
  // With `decode`, each record is decoded as soon as it is read, from one object refilled for every
  // record (decode keeps none of it): a fresh object per record, its dozen or more properties set by
  // computed names, took ~2 KB a record (allocation sampling of a catch-up read), and a page of them held
  // to the end of the file survived the young-generation collections made meanwhile.
  const rows: T[] = [];
  const shared: Record<string, unknown> | null = decode ? {} : null;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const row: Record<string, unknown> = shared ?? {};
    for (let c = 0; c < columns.length; c++) {
      const col = columns[c];
      let value: string | number | null;
      const q = tripleQuotedEnd(text, i);
      if (q >= 0) {
        // A text cell holding no quote: the JSON string is one slice, not three joined (the common cell).
        value = text.slice(i + 2, q + 1);
        i = q + 3;
      } else if (text.charCodeAt(i) === 34) {
        let out = '';
        let from = ++i;
        for (;;) {
          const q = text.indexOf('"', i);
          if (q < 0) throw new Error('unterminated quoted cell in a graph store read');
          if (text.charCodeAt(q + 1) === 34) {
            out += text.slice(from, q + 1);
            i = from = q + 2;
            continue;
          }
          out += text.slice(from, q);
          i = q + 1;
          break;
        }
        value = out;
      } else {
        // An integer cell of up to 16 digits is read from its digits (exact up to 2^53): no string is made
        // for it, as for every sequence number and timestamp of a catch-up page.
        let end = i;
        let digits = 0;
        let whole = 0;
        const negative = text.charCodeAt(i) === 45;
        if (negative) end++;
        for (let d = text.charCodeAt(end) - 48; d >= 0 && d <= 9 && digits < 16; d = text.charCodeAt(++end) - 48, digits++)
          whole = whole * 10 + d;
        const delimited = end >= n || text.charCodeAt(end) === 44 || text.charCodeAt(end) === 10 || text.charCodeAt(end) === 13;
        if (col?.type === 'int' && digits > 0 && delimited && whole <= Number.MAX_SAFE_INTEGER) {
          value = negative ? -whole : whole;
          i = end;
        } else {
          end = i;
          while (end < n && text.charCodeAt(end) !== 44 && text.charCodeAt(end) !== 10 && text.charCodeAt(end) !== 13) end++;
          const raw = text.slice(i, end);
          i = end;
          value = raw === '' ? null : col && col.type !== 'text' && col.type !== 'json' ? Number(raw) : raw;
        }
      }
      if (col) row[col.name] = value;
      if (c < columns.length - 1) {
        if (text.charCodeAt(i) !== 44) throw new Error('malformed record in a graph store read');
        i++;
      }
    }
    if (text.charCodeAt(i) === 13) i++;
    if (i < n && text.charCodeAt(i) !== 10) throw new Error('malformed record end in a graph store read');
    i++;
    rows.push(decode ? decode(row) : (row as T));
  }
  return rows;
}

/**
 * For a cell at `start` opening with three quotes whose first quote after them is followed by two more
 * and the cell's end, that first quote's place; else -1. The quotes at the end are the JSON string's
 * closing quote doubled, then the cell's own, so the cell's value is the slice from the third opening
 * quote to the first closing one.
 */
function tripleQuotedEnd(text: string, start: number): number {
  if (text.charCodeAt(start) !== 34 || text.charCodeAt(start + 1) !== 34 || text.charCodeAt(start + 2) !== 34) return -1;
  const q = text.indexOf('"', start + 3);
  if (q < 0 || text.charCodeAt(q + 1) !== 34 || text.charCodeAt(q + 2) !== 34) return -1;
  const after = text.charCodeAt(q + 3);
  return q + 3 >= text.length || after === 44 || after === 10 || after === 13 ? q : -1;
}

export function decodeText(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  // Parsed, never sliced between the quotes: the cell is itself a slice of a whole answer's text (a CSV file
  // read at once), and V8 keeps a slice's parent alive, so a read model holding a few rows of a space load,
  // or the ids' places holding ids of a scan, held each file whole (~100 MB at 3M rows, unseen by their
  // budgets). JSON.parse makes a string of its own; it costs ~75 ns a cell more than the slice did.
  return JSON.parse(value) as string;
}

export function decodeInt(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  throw new TypeError(`expected an integer column, got ${typeof value}`);
}

/** The (tenant, space) pairs and Holds rows a group writes, derived from its rows. */
function holdsOf(group: CommitGroup): { spaces: SpaceKeyRow[]; block: HoldsRow[]; edge: HoldsRow[]; invalidation: HoldsRow[] } {
  const spaces = new Map<string, SpaceKeyRow>();
  const hold = (tenant: string, space: string, seq: number): HoldsRow => {
    const key = identKey(tenant, space);
    if (!spaces.has(key)) spaces.set(key, { tenant, space });
    return { tenant, space, seq };
  };
  const invalidation = new Map<string, HoldsRow>();
  const holdInvalidation = (i: Invalidation, space: string): void => {
    const key = `${identKey(i.tenant, space)}${IDENT_SEP}${i.seq}`;
    if (!invalidation.has(key)) invalidation.set(key, hold(i.tenant, space, i.seq));
  };
  for (const i of group.invalidations) holdInvalidation(i, i.space);
  for (const l of group.invalidationSpaces) holdInvalidation(l.row, l.space);
  return {
    block: group.nodes.map((n) => hold(n.tenant, n.space, n.seq)),
    edge: group.edges.map((e) => hold(e.tenant, e.space, e.seq)),
    invalidation: [...invalidation.values()],
    spaces: [...spaces.values()],
  };
}

/** The (tenant, id, space) pairs a group's node and edge rows name, each once; those in `stored` left out. */
export function identsOf(group: Pick<CommitGroup, 'nodes' | 'edges'>, stored?: ReadonlySet<string>): IdentSpaceRow[] {
  return [...identsByKey(group, stored).values()];
}

/** The same by their key (tenant, id and space). */
function identsByKey(group: Pick<CommitGroup, 'nodes' | 'edges'>, stored?: ReadonlySet<string>): Map<string, IdentSpaceRow> {
  const out = new Map<string, IdentSpaceRow>();
  for (const [tenant, id, space] of idPlacements(group)) {
    const key = identKey(identKey(tenant, id), space);
    if (!out.has(key) && !stored?.has(key)) out.set(key, { tenant, id, space });
  }
  return out;
}

export const identPairKey = (r: IdentSpaceRow): string => identKey(identKey(r.tenant, r.id), r.space);

/** The keys of the TenantSpace and IdentIn rows a group writes, for the sets of those written (see tablesOf). */
export interface WrittenKeys {
  spaces: string[];
  idents: string[];
}
/** One Ident row per id: a COPY repeating a key within its file would fail. */
export const uniqueIdents = (rows: readonly IdentSpaceRow[]): IdentSpaceRow[] => [
  ...new Map(rows.map((r) => [identKey(r.tenant, r.id), r])).values(),
];

/**
 * Every table a commit group fills, in the order they are written. A new table adds its line here and
 * gets both write paths.
 */
export function tablesOf(
  group: CommitGroup,
  storedSpaces?: ReadonlySet<string>,
  storedIdents?: ReadonlySet<string>,
  written?: WrittenKeys,
): TableRows[] {
  const h = holdsOf(group);
  const identsKeyed = identsByKey(group, storedIdents);
  const idents = [...identsKeyed.values()];
  // A TenantSpace row this process has committed or journaled already is not written again: one COPY
  // statement fewer in most copies (each costs a fixed ~10-50 ms).
  if (storedSpaces) h.spaces = h.spaces.filter((r) => !storedSpaces.has(identKey(r.tenant, r.space)));
  if (written) {
    for (const r of h.spaces) written.spaces.push(identKey(r.tenant, r.space));
    for (const key of identsKeyed.keys()) written.idents.push(key);
  }
  return [
    tableRows(BATCH, group.batches),
    tableRows(NODE, group.nodes),
    tableRows(EDGE, group.edges),
    tableRows(DECLARATION, group.declarations),
    tableRows(VERDICT, group.verdicts),
    tableRows(INVALIDATION, group.invalidations),
    tableRows(SPACE, group.spaces),
    // After the rows they join, in the same transaction: a relationship's ends must exist when it is copied.
    tableRows(TENANT_SPACE, h.spaces),
    tableRows(HOLDS_BLOCK, h.block),
    tableRows(HOLDS_EDGE, h.edge),
    tableRows(HOLDS_INVALIDATION, h.invalidation),
    tableRows(IDENT, uniqueIdents(idents)),
    tableRows(IDENT_IN, idents),
  ];
}

const t = (r: Record<string, unknown>, k: string): string | null => decodeText(r[k]);
export const str = (r: Record<string, unknown>, k: string): string => {
  const v = decodeText(r[k]);
  if (v === null) throw new TypeError(`column ${k} is null`);
  return v;
};
export const i64 = (r: Record<string, unknown>, k: string): number => decodeInt(r[k]);

/** Rows of each table back from Kuzu's answer, read by their columns. */
export const DECODE = {
  batch: decoder(BATCH),
  node: decoder(NODE),
  edge: decoder(EDGE),
  declaration: decoder(DECLARATION),
  verdict: decoder(VERDICT),
  space: decoder(SPACE),
  invalidation: decoder(INVALIDATION),
};

/** Every table with its columns, in tablesOf's order: the journal and `counts` use the same list. */
export const TABLES: readonly Pick<TableRows, 'table' | 'columns'>[] = tablesOf(emptyGroup());
/** The ledger's own tables, each row carrying a tseq: not the index of rows by space (TenantSpace, Holds). */
export const ROW_TABLES = TABLES.filter((t) => t.columns.some((c) => c.name === 'tseq'));
export const specOf = (table: string): Pick<TableRows, 'table' | 'columns'> => {
  const spec = TABLES.find((t) => t.table === table);
  if (!spec)
    throw new Error(
      `write journal names a table this release does not have (${table}): open the data folder with the release that wrote it`,
    );
  return spec;
};
export const keyColumn = (spec: Pick<TableRows, 'table'>): string =>
  spec.table === BATCH.table || spec.table === TENANT_SPACE.table || spec.table === IDENT.table
    ? 'key'
    : spec.table === SPACE.table
      ? 'name'
      : 'seq';
/** Tables whose rows stand for a commit in the journal's probes: one per commit group, with a unique key. */
export const isRowTable = (table: string): boolean => table !== SPACE.table && !isIndex(table);
/** Tables whose rows are written again for keys the store holds (Space, TenantSpace, Ident). */
const SKIPS_STORED_KEYS: ReadonlySet<string> = new Set([SPACE.table, TENANT_SPACE.table, IDENT.table]);
/**
 * The statement loading `file` (`part`'s rows as toCsv writes them) into its table. For the tables whose
 * rows are written again for stored keys, a row whose key the store holds, or an earlier row of the file
 * holds, is left out (`ignore_errors`): the first writer stays. Kuzu 0.11.3 logs each row left out as a
 * deletion in the WAL, which it cannot replay when a kill cut the copy's checkpoint short; the open then
 * sets that WAL aside and copies the write journal in again (store-repair.ts). A `MERGE` writes nothing
 * for a stored key, but joins the file with a hash table of every key of the table: at 2.4M Ident keys it
 * needed more than the 256 MB buffer pool for a file of 1,000 rows, and every copy failed
 * (docs/storage.md, "A kill during a checkpoint").
 */
export function copyFrom(part: Pick<TableRows, 'table'>, file: string): string {
  return `COPY ${part.table} FROM '${file}' (${CSV_OPTIONS}${SKIPS_STORED_KEYS.has(part.table) ? ', ignore_errors=true' : ''})`;
}
/** A journal row's identity within its table, for dropping repeats: the primary key, or a relationship's two ends. */
const rowIdentity = (spec: Pick<TableRows, 'table' | 'columns'>): ((row: readonly Cell[]) => Cell) => {
  if (isRel(spec.table)) return (row) => `${String(row[0])}${IDENT_SEP}${String(row[1])}`;
  const key = spec.columns.findIndex((c) => c.name === keyColumn(spec));
  return (row) => row[key] ?? null;
};

/** The journal's records as one TableRows per table, in table order; repeated primary keys kept once. */
export function journalParts(records: readonly JournalRecord[]): TableRows[] {
  // A record naming a table this release does not have (a newer release's journal) stops the open.
  for (const r of records) for (const t of r.tables) specOf(t.table);
  return TABLES.map((spec) => {
    const identity = rowIdentity(spec);
    const tseqLast = spec.columns[spec.columns.length - 1]?.name === 'tseq';
    const seqAt = spec.columns.findIndex((c) => c.name === 'seq');
    const seen = new Set<Cell>();
    const rows: Cell[][] = [];
    for (const r of records)
      for (const t of r.tables)
        if (t.table === spec.table)
          for (let row of t.rows) {
            const key = identity(row);
            if (seen.has(key)) continue;
            seen.add(key);
            // A record journaled by layout 2 lacks tseq (the last column): a row written here has tseq = seq;
            // a Space row's is filled by the layout's migration.
            if (tseqLast && row.length === spec.columns.length - 1) row = [...row, seqAt >= 0 ? (row[seqAt] ?? null) : null];
            rows.push(row);
          }
    return cellRows(spec, rows);
  });
}

/** A journal row as a read of the engine hands it to DECODE: text cells JSON-encoded, tseq filled. */
export function asRead(spec: Pick<TableRows, 'columns'>, row: readonly Cell[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const seqAt = spec.columns.findIndex((c) => c.name === 'seq');
  spec.columns.forEach((c, i) => {
    // A record journaled by layout 2 lacks tseq (see journalParts).
    const v = i < row.length ? (row[i] ?? null) : c.name === 'tseq' && seqAt >= 0 ? (row[seqAt] ?? null) : null;
    out[c.name] = v === null ? null : c.type === 'text' || c.type === 'json' ? JSON.stringify(v) : v;
  });
  return out;
}

/** What the journal's records add to the view of one space (see journalRowsOfSpaces). */
export type JournaledSpaceRows = Pick<LoadedLedger, 'nodes' | 'edges' | 'invalidations'> & { heldSeqs: number[] };

/**
 * What the journal's records add to the view of one space: its node and edge rows, the invalidations
 * recorded in it or held by it through a journaled Holds row, and the numbers of every invalidation such
 * a row holds (some stored in the engine already).
 */
export function journalRowsOfSpace(records: Iterable<JournalRecord>, tenant: string, space: string): JournaledSpaceRows {
  return journalRowsOfSpaces(records, tenant, [space]).get(space)!;
}

/** journalRowsOfSpace for several spaces of a tenant, in one pass over the records. */
export function journalRowsOfSpaces(
  records: Iterable<JournalRecord>,
  tenant: string,
  spaces: readonly string[],
): Map<string, JournaledSpaceRows> {
  const out = new Map<string, JournaledSpaceRows>(spaces.map((s) => [s, { nodes: [], edges: [], invalidations: [], heldSeqs: [] }]));
  const byKey = new Map(spaces.map((s) => [identKey(tenant, s), s]));
  /** Per invalidation held through a journaled Holds row, the spaces holding it. */
  const held = new Map<number, Set<string>>();
  const col = (spec: Pick<TableRows, 'columns'>, name: string): number => spec.columns.findIndex((c) => c.name === name);
  const list = [...records];
  for (const r of list)
    for (const t of r.tables)
      if (t.table === HOLDS_INVALIDATION.table)
        for (const row of t.rows) {
          const space = byKey.get(row[0] as string);
          if (space === undefined) continue;
          const seq = Number(row[1]);
          let set = held.get(seq);
          if (!set) held.set(seq, (set = new Set()));
          if (!set.has(space)) {
            set.add(space);
            out.get(space)!.heldSeqs.push(seq);
          }
        }
  for (const r of list)
    for (const t of r.tables) {
      const spec = t.table === NODE.table ? NODE : t.table === EDGE.table ? EDGE : t.table === INVALIDATION.table ? INVALIDATION : null;
      if (!spec) continue;
      const [ti, si, qi] = [col(spec, 'tenant'), col(spec, 'space'), col(spec, 'seq')];
      for (const row of t.rows) {
        if (row[ti] !== tenant) continue;
        const own = out.get(row[si] as string);
        if (spec === INVALIDATION) {
          const holders = held.get(Number(row[qi]));
          if (!own && !holders) continue;
          const inv = DECODE.invalidation(asRead(spec, row));
          own?.invalidations.push(inv);
          for (const s of holders ?? []) if (out.get(s) !== own) out.get(s)!.invalidations.push(inv);
        } else if (own) {
          if (spec === NODE) own.nodes.push(DECODE.node(asRead(spec, row)));
          else own.edges.push(DECODE.edge(asRead(spec, row)));
        }
      }
    }
  return out;
}

/** A commit group as the journal records it; throws on a cell the engine would not store as given. */
export function journalRecord(parts: readonly TableRows[]): JournalRecord {
  const tables: JournalRecord['tables'] = [];
  for (const part of parts) {
    if (part.count === 0) continue;
    const cells = [...part.cells()];
    // Only number columns can hold a cell the engine would change (checkCell passes any text): a
    // callback per cell was ~4 ms of a 1,000-row import request's journal record.
    const numeric: [number, Scalar][] = [];
    part.columns.forEach((c, i) => {
      if (c.type !== 'text' && c.type !== 'json') numeric.push([i, c.type]);
    });
    for (const row of cells) for (const [i, type] of numeric) checkCell(row[i] ?? null, type);
    tables.push({ table: part.table, rows: cells });
  }
  return { tables };
}

/** The journal record of a whole commit group (tests build crashed journals with it). */
export const journalRecordOf = (group: CommitGroup): JournalRecord => journalRecord(tablesOf(group));

/**
 * The keyed index tables and IdentIn first, then the rows: a copy that fails on a key missing from the
 * index (see #copyRepairing) fails before any row is inserted. Kuzu 0.11.3 crashed the process with a
 * SIGSEGV rolling back a transaction whose IdentIn copy failed after its Block and Edge copies; rolled
 * back before them, it returned the error.
 */
const COPY_FIRST = [SPACE.table, TENANT_SPACE.table, IDENT.table, IDENT_IN.table];
const copyRank = (table: string): number => {
  const at = COPY_FIRST.indexOf(table);
  return at < 0 ? COPY_FIRST.length : at;
};
export const inCopyOrder = (parts: readonly TableRows[]): TableRows[] => [...parts].sort((a, b) => copyRank(a.table) - copyRank(b.table));

/** Per table, the journal's rows followed by the group's (both in tablesOf's order). */
export function merged(journal: readonly TableRows[], group: readonly TableRows[]): TableRows[] {
  return journal.map((j, i) => {
    const g = group[i];
    if (!g || g.count === 0) return j;
    if (j.count === 0) return g;
    return cellRows(j, [...j.cells(), ...g.cells()]);
  });
}
