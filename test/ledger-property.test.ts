// Property test: random rounds of writes (backfill, equal and omitted instants, adjacent and overlapping
// validity, reused ids, re-sends, supersession edges, concurrent requests sharing a commit group) and
// invalidations (some backfilled) go through the real Ledger on Kuzu; a small reference model written
// here, independent of storage/, predicts every write and invalidation outcome and every list and get
// answer (superseded_by, current_only, include_invalidated included) on a grid of as_of × valid_at,
// with the tenant evicted and reloaded from the store between reads. A read of one space answers from
// that space's own read model (loaded from the store's index of rows by space, evicted with every other
// view whenever a ballast tenant larger than the budget is loaded), so reads cross space evictions and
// reloads while ids, invalidations and SUPERSEDES edges cross spaces (a request of s1 links and
// invalidates ids of s2).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../storage/log/ledger.ts';
import { formatInstant } from '../storage/time.ts';
import { EDGE_TYPES } from '../storage/types.ts';
import { LAG_FORMS, type EdgeInput, type NodeInput, type WriteInput, type WriteOutcome } from '../storage/log/write-plan.ts';
import type { Context } from '../tools/context.ts';
import { getMemory, type GetMemoryOutput } from '../tools/get-memory.ts';
import { listMemories, type ListMemoriesOutput } from '../tools/list-memories.ts';
import { runOperation, type AnyOperation } from '../tools/operation.ts';

// Six runs by default (~20-40 s on a shared 2-core machine); PROPERTY_RUNS=40 or more to search harder,
// PROPERTY_SEED (and PROPERTY_PATH, both printed with a failure) to replay one. The runs and the shrinking
// of a failure stop after PROPERTY_TIME_MS; a failure is then printed as shrunk so far.
const RUNS = Number(process.env.PROPERTY_RUNS ?? '6');
const TIME_MS = Number(process.env.PROPERTY_TIME_MS ?? '300000');
/** Runs enough to require every invalidation outcome and rows crossing spaces (a smaller run, or a replay, may miss one). */
const FULL = RUNS >= 6 && !process.env.PROPERTY_PATH;
const OPEN = Number.POSITIVE_INFINITY;
// Content time: a small grid of instants, so equal and adjacent instants are common.
const T = Date.UTC(2024, 0, 1) * 1000;
const at = (k: number): number => T + k * 1000;
const IDS = ['a', 'b', 'c', 'd', 'e'];
const SPACES = ['s1', 's2'];
const LAGS: Record<string, string | null> = { P1D: 'P1D', '24 hours': 'P1D', '3 days': 'P3D', PT72H: 'P3D', soon: null };

// ---- generated writes -------------------------------------------------------------------------------

interface GenNode {
  id: string;
  kind: string;
  statement: string;
  category: string | null;
  asserted?: number;
  from?: number;
  to?: number;
  setsCaptured: boolean;
}
interface GenEdge {
  s: string;
  t: string;
  type: string;
  lag?: string;
  confidence: number | null;
  asserted?: number;
  setsCaptured: boolean;
}
interface GenRequest {
  space: string;
  backfill: null | { ref: 'content'; k: number } | { ref: 'capture'; back: number; delta: -1 | 0 | 1 };
  nodes: GenNode[];
  edges: GenEdge[];
}

const slot = fc.integer({ min: 0, max: 12 });
const genNode: fc.Arbitrary<GenNode> = fc
  .record({
    id: fc.constantFrom(...IDS),
    kind: fc.constantFrom('claim', 'entity'),
    statement: fc.constantFrom('x', 'y'),
    category: fc.constantFrom(null, 'c1', 'c2'),
    asserted: fc.option(slot, { nil: undefined }),
    from: fc.option(slot, { nil: undefined }),
    len: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
    setsCaptured: fc.integer({ min: 0, max: 19 }).map((x) => x === 0),
  })
  .map(({ asserted, from, len, ...rest }) => {
    const n: GenNode = { ...rest };
    if (asserted !== undefined) n.asserted = at(asserted);
    if (from !== undefined) n.from = at(from);
    // valid_to only after an explicit start, so every interval is non-empty (the handler refuses the rest).
    const start = n.from ?? n.asserted;
    if (start !== undefined && len !== undefined) n.to = start + len * 1000;
    return n;
  });

const genEdge: fc.Arbitrary<GenEdge> = fc.record({
  s: fc.constantFrom(...IDS, 'zz'),
  t: fc.constantFrom(...IDS),
  type: fc.constantFrom('SUPERSEDES', 'CAUSES', 'SUPPORTS', 'BECAUSE'),
  lag: fc.option(fc.constantFrom(...Object.keys(LAGS)), { nil: undefined }),
  confidence: fc.constantFrom(null, 0.5, 0.9),
  asserted: fc.option(slot.map(at), { nil: undefined }),
  setsCaptured: fc.integer({ min: 0, max: 19 }).map((x) => x === 0),
});

const genRequest: fc.Arbitrary<GenRequest> = fc.record({
  space: fc.constantFrom(...SPACES),
  backfill: fc.oneof(
    { weight: 3, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.record({ ref: fc.constant('content' as const), k: slot }) },
    {
      weight: 1,
      arbitrary: fc.record({
        ref: fc.constant('capture' as const),
        back: fc.nat(4),
        delta: fc.constantFrom(-1 as const, 0 as const, 1 as const),
      }),
    },
  ),
  nodes: fc.array(genNode, { maxLength: 5 }),
  edges: fc.array(genEdge, { maxLength: 4 }),
});

/** An invalidation after a round: of an id, optionally backfilled to a content instant. */
interface GenInvalidation {
  id: string;
  backfill: number | null;
}
const genInvalidation: fc.Arbitrary<GenInvalidation> = fc.record({
  id: fc.constantFrom(...IDS, 'zz'),
  backfill: fc.option(slot, { nil: null }),
});

/** Rounds of 1-3 requests sent together (they usually share one commit group), each maybe followed by invalidations. */
interface GenRound {
  requests: GenRequest[];
  invalidations: GenInvalidation[];
}
const genRounds: fc.Arbitrary<GenRound[]> = fc.array(
  fc.record({ requests: fc.array(genRequest, { minLength: 1, maxLength: 3 }), invalidations: fc.array(genInvalidation, { maxLength: 2 }) }),
  { minLength: 8, maxLength: 16 },
);

// ---- the reference model ----------------------------------------------------------------------------

interface MNode {
  seq: number;
  id: string;
  space: string;
  kind: string;
  statement: string;
  category: string | null;
  asserted: number;
  from: number;
  to: number;
  captured: number;
  known: number;
  batch: string | null;
  content: string;
}
interface MEdge {
  seq: number;
  s: string;
  t: string;
  type: string;
  space: string;
  asserted: number;
  from: number;
  to: number;
  known: number;
  batch: string | null;
  content: string;
  identity: string;
}

interface MInvalidation {
  id: string;
  known: number;
}
type InvalidationResult = 'written' | 'already' | 'not_found' | 'bad_backfill';

class Model {
  nodes: MNode[] = [];
  edges: MEdge[] = [];
  invalidations: MInvalidation[] = [];
  seq = 0;

  invalidate(id: string, captured: number, declared: number | undefined): InvalidationResult {
    const versions = this.nodes.filter((n) => n.id === id && n.known <= captured);
    if (versions.length === 0) return 'not_found';
    if (this.invalidations.some((i) => i.id === id && i.known <= captured)) return 'already';
    if (declared !== undefined && (declared > captured || !versions.some((v) => v.known <= declared))) return 'bad_backfill';
    this.invalidations.push({ id, known: declared ?? captured });
    return 'written';
  }

  invalidated(id: string, asOf: number): MInvalidation | undefined {
    return this.invalidations.filter((i) => i.id === id && i.known <= asOf).sort((a, b) => a.known - b.known)[0];
  }

  supersededBy(id: string, asOf: number, validAt: number | undefined, space: string | undefined): string[] {
    const ids = this.edges
      .filter(
        (e) =>
          e.type === 'SUPERSEDES' &&
          e.t === id &&
          e.known <= asOf &&
          Model.inForce(e, validAt) &&
          (space === undefined || e.space === space) &&
          !this.invalidated(e.s, asOf),
      )
      .map((e) => e.s);
    return [...new Set(ids)].sort();
  }

  write(req: WriteInput, captured: number): Pick<WriteOutcome, 'accepted' | 'refused' | 'warnings' | 'ids'> & { batch: boolean } {
    const out = {
      accepted: 0,
      refused: [] as WriteOutcome['refused'],
      warnings: [] as WriteOutcome['warnings'],
      ids: [] as string[],
      batch: false,
    };
    const known = req.backfill ? req.backfill.declared_captured_at : captured;
    const batch = req.backfill ? `b${captured}` : null;
    for (const n of req.nodes) {
      const id = n.id ?? '';
      if (n.sets_captured_at) {
        out.refused.push({ id, kind: 'node', reason: 'captured_at_not_allowed' });
        continue;
      }
      const content = JSON.stringify([
        req.space,
        n.kind,
        n.statement,
        n.category,
        n.asserted_at ?? null,
        n.valid_from ?? null,
        n.valid_to ?? null,
      ]);
      const mine = this.nodes.filter((v) => v.id === id);
      if (mine.some((v) => v.content === content)) {
        out.warnings.push({ id, kind: 'node', warning: 'already_remembered' });
        continue;
      }
      const asserted = n.asserted_at ?? captured;
      const from = n.valid_from ?? asserted;
      const to = n.valid_to ?? OPEN;
      if (mine.some((v) => v.from < to && from < v.to)) {
        out.refused.push({ id, kind: 'node', reason: 'id_conflict' });
        continue;
      }
      this.nodes.push({
        seq: ++this.seq,
        id,
        space: req.space,
        kind: n.kind,
        statement: n.statement ?? '',
        category: n.category ?? null,
        asserted,
        from,
        to,
        captured,
        known,
        batch,
        content,
      });
      out.ids.push(id);
      out.accepted++;
    }
    for (const e of req.edges) {
      const label = `${e.source_id}->${e.target_id}`;
      if (e.sets_captured_at) {
        out.refused.push({ id: label, kind: 'edge', reason: 'captured_at_not_allowed' });
        continue;
      }
      if (!['SUPERSEDES', 'CAUSES', 'SUPPORTS'].includes(e.edge_type)) {
        out.refused.push({ id: label, kind: 'edge', reason: 'unknown_edge_type', allowed: [...EDGE_TYPES] });
        continue;
      }
      const lag = e.lag === undefined || e.lag === null ? null : (LAGS[e.lag] ?? null);
      if (e.lag && lag === null) {
        out.refused.push({ id: label, kind: 'edge', reason: 'invalid_lag', expected: LAG_FORMS });
        continue;
      }
      if (!this.nodes.some((v) => v.id === e.source_id) || !this.nodes.some((v) => v.id === e.target_id)) {
        out.refused.push({ id: label, kind: 'edge', reason: 'missing_endpoint' });
        continue;
      }
      const content = JSON.stringify([req.space, e.source_id, e.target_id, e.edge_type, e.confidence ?? null, lag, e.asserted_at ?? null]);
      if (this.edges.some((x) => x.content === content)) {
        out.warnings.push({ id: label, kind: 'edge', warning: 'already_remembered' });
        continue;
      }
      // Without its own time an edge is asserted at the later of its endpoints' assertions.
      const asserted =
        e.asserted_at ?? Math.max(...this.nodes.filter((v) => v.id === e.source_id || v.id === e.target_id).map((v) => v.asserted));
      const identity = JSON.stringify([e.source_id, e.target_id, e.edge_type, asserted]);
      if (this.edges.some((x) => x.identity === identity)) {
        out.refused.push({ id: label, kind: 'edge', reason: 'id_conflict' });
        continue;
      }
      this.edges.push({
        seq: ++this.seq,
        s: e.source_id,
        t: e.target_id,
        type: e.edge_type,
        space: req.space,
        asserted,
        from: asserted,
        to: OPEN,
        known,
        batch,
        content,
        identity,
      });
      out.accepted++;
    }
    out.batch = req.backfill !== undefined && out.accepted > 0;
    return out;
  }

  static inForce(r: { asserted: number; from: number; to: number }, validAt: number | undefined): boolean {
    return validAt === undefined || (r.asserted <= validAt && r.from <= validAt && validAt < r.to);
  }

  list(asOf: number, validAt: number | undefined, f: { space?: string; kind?: string; category?: string }, flags: Flags = {}) {
    const match = this.nodes.filter(
      (n) =>
        (f.space === undefined || n.space === f.space) &&
        (f.kind === undefined || n.kind === f.kind) &&
        (f.category === undefined || n.category === f.category) &&
        Model.inForce(n, validAt),
    );
    const known = match.filter((n) => n.known <= asOf);
    const retracted = (n: MNode): boolean => this.invalidated(n.id, asOf) !== undefined;
    const items = known.filter(
      (n) =>
        (!retracted(n) || (flags.include_invalidated && !flags.current_only)) &&
        (!flags.current_only || this.supersededBy(n.id, asOf, validAt, f.space).length === 0),
    );
    const maskedEdges = this.edges.filter(
      (e) => (f.space === undefined || e.space === f.space) && Model.inForce(e, validAt) && e.known > asOf,
    ).length;
    const invalidated = known.filter((n) => retracted(n) && (!flags.include_invalidated || flags.current_only)).length;
    return { items, masked: { node: match.length - known.length, edge: maskedEdges, verdict: 0 }, invalidated };
  }

  get(id: string, asOf: number, validAt: number | undefined, space: string | undefined) {
    const all = this.nodes.filter((n) => n.id === id && (space === undefined || n.space === space));
    const versions = all.filter((n) => n.known <= asOf);
    if (versions.length === 0)
      return { item: null, versions, out: [], in: [], maskedNode: all.length, maskedEdge: 0, reason: all.length ? 'not_yet' : 'absent' };
    let item: MNode | null = null;
    for (const v of versions) if (Model.inForce(v, validAt) && (item === null || v.from > item.from)) item = v;
    const side = (mine: (e: MEdge) => boolean, other: (e: MEdge) => string) => {
      const cand = this.edges.filter(
        (e) =>
          mine(e) &&
          (space === undefined || (e.space === space && this.nodes.some((n) => n.id === other(e) && n.space === space))) &&
          Model.inForce(e, validAt),
      );
      return { shown: cand.filter((e) => e.known <= asOf), masked: cand.filter((e) => e.known > asOf).length };
    };
    const out = side(
      (e) => e.s === id,
      (e) => e.t,
    );
    const inn = side(
      (e) => e.t === id,
      (e) => e.s,
    );
    return {
      item,
      versions,
      out: out.shown,
      in: inn.shown,
      maskedNode: all.length - versions.length,
      maskedEdge: out.masked + inn.masked,
      reason: undefined,
    };
  }
}

interface Flags {
  current_only?: boolean;
  include_invalidated?: boolean;
}
const FLAGS: Flags[] = [{}, { current_only: true }, { include_invalidated: true }, { current_only: true, include_invalidated: true }];

function expectedBackfill(rows: { batch: string | null }[]): { batches: number; rows: number } | undefined {
  const withBatch = rows.filter((r) => r.batch !== null);
  return withBatch.length ? { batches: new Set(withBatch.map((r) => r.batch)).size, rows: withBatch.length } : undefined;
}

function nonZero(m: { node: number; edge: number; verdict?: number }): Record<string, number> | undefined {
  const out = Object.fromEntries(Object.entries(m).filter(([, v]) => v > 0));
  return Object.keys(out).length ? out : undefined;
}

// ---- the test ---------------------------------------------------------------------------------------

let dir: string;
let ledger: Ledger;
let tenantNo = 0;
let operations = 0;
const invalidationOutcomes = new Map<string, number>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ledger-prop-'));
  // A read-model budget of about 1,400 rows: a run's tenant and its two spaces fit, the ballast tenant
  // (1,500 rows) does not, so loading it evicts every other view. Every few reads (see `read`) the views
  // in use are dropped that way, so reads run on views reloaded from the store as often as on views built
  // up commit by commit. (A zero budget would reload a view on every read: a confined read and a whole
  // read of one tenant use different views, and each would evict the other.)
  ledger = await Ledger.open(dir, { memoryMb: 1 });
  const ballast = Array.from({ length: 1500 }, (_, i) => ({ id: `b${i}`, kind: 'claim', statement: `ballast ${i}` }));
  await ledger.write('ballast', { space: 'b', nodes: ballast, edges: [] });
});
afterAll(async () => {
  await ledger.close();
  rmSync(dir, { recursive: true, force: true });
});

function toInput(req: GenRequest, captures: number[]): WriteInput {
  let backfill: WriteInput['backfill'];
  if (req.backfill?.ref === 'content') backfill = { declared_captured_at: at(req.backfill.k), reason: 'import' };
  else if (req.backfill?.ref === 'capture') {
    const base = captures[captures.length - 1 - req.backfill.back] ?? at(0);
    // Never later than the present, as the remember handler guarantees.
    backfill = { declared_captured_at: Math.min(base + req.backfill.delta, ledger.now()), reason: 'late' };
  }
  const nodes: NodeInput[] = req.nodes.map((n) => ({
    id: n.id,
    kind: n.kind,
    statement: n.statement,
    category: n.category,
    asserted_at: n.asserted,
    valid_from: n.from,
    valid_to: n.to,
    sets_captured_at: n.setsCaptured,
  }));
  const edges: EdgeInput[] = req.edges.map((e) => ({
    source_id: e.s,
    target_id: e.t,
    edge_type: e.type,
    lag: e.lag,
    confidence: e.confidence,
    asserted_at: e.asserted,
    sets_captured_at: e.setsCaptured,
  }));
  return { space: req.space, backfill, nodes, edges };
}

let reads = 0;
let spaceReads = 0;
const crossing = { invalidations: 0, supersedes: 0 };
const EVICT_EVERY = 30;
/** Points of the grid per run (each as_of × valid_at pair is read through 4 lists and 6 gets). */
const AS_OFS = 8;
const VALID_ATS = 4;

/** One read through the operation; every few reads the tenant's views are evicted first (a ballast tenant is loaded). */
async function read<T>(op: AnyOperation, ctx: Context, input: Record<string, unknown>): Promise<T> {
  if (++reads % EVICT_EVERY === 0) {
    await ledger.load('ballast');
    expect(ledger.tenants()).toEqual(['ballast']);
    expect(ledger.residentSpaces()).toEqual([]);
  }
  const wholeBefore = ledger.tenants().includes(ctx.tenant);
  const out = (await runOperation(op, input, ctx)) as T;
  if (typeof input.space === 'string') {
    // A read of one space never loads the tenant, and answers from its space's view.
    if (!wholeBefore) expect(ledger.tenants()).not.toContain(ctx.tenant);
    spaceReads++;
  }
  return out;
}

const fmtOpt = (us: number | undefined): string | undefined => (us === undefined ? undefined : formatInstant(us));

describe('ledger against a reference model', () => {
  it(
    'answers every write, list and get as the model does',
    async () => {
      await fc.assert(
        fc.asyncProperty(genRounds, fc.integer({ min: 0, max: 2 ** 31 - 1 }), async (rounds, seed) => {
          const tenant = `t${++tenantNo}`;
          const ctx: Context = { ledger, tenant, services: { version: 'test' } };
          const model = new Model();
          const captures: number[] = [];
          for (const { requests: round, invalidations } of rounds) {
            const inputs = round.map((r) => toInput(r, captures));
            // Sent together: the queue plans them in call order, usually inside one commit group, but a write
            // whose lookup of spaces went stale (a write of the same burst put one of its ids in a space not
            // in memory) is planned again after the others. Plans follow captured_at, and so does the model.
            const outcomes = await Promise.all(inputs.map((input) => ledger.write(tenant, input)));
            const planned = outcomes
              .map((outcome, i) => ({ outcome, input: inputs[i]! }))
              .sort((a, b) => a.outcome.captured_at - b.outcome.captured_at);
            for (const { outcome, input } of planned) {
              const last = captures[captures.length - 1] ?? 0;
              expect(outcome.captured_at).toBeGreaterThan(last);
              captures.push(outcome.captured_at);
              const want = model.write(input, outcome.captured_at);
              expect({
                accepted: outcome.accepted,
                refused: outcome.refused,
                warnings: outcome.warnings,
                ids: outcome.ids,
                batch: outcome.batch !== null,
              }).toEqual(want);
              operations += input.nodes.length + input.edges.length;
            }
            for (const inv of invalidations) {
              const declared = inv.backfill === null ? undefined : at(inv.backfill);
              const got = await ledger.invalidate(tenant, {
                id: inv.id,
                reason: 'wrong',
                backfill: declared === undefined ? undefined : { declared_captured_at: declared, reason: 'late' },
              });
              const captured = got.kind === 'written' ? got.invalidation.invalidated_at : ledger.now();
              if (got.kind === 'written') captures.push(captured);
              expect(got.kind).toBe(model.invalidate(inv.id, captured, declared));
              invalidationOutcomes.set(got.kind, (invalidationOutcomes.get(got.kind) ?? 0) + 1);
              if (got.kind === 'written') expect(got.invalidation.known_at).toBe(declared ?? captured);
              operations++;
            }
          }
          // The grid: every capture and declared instant, one microsecond either side, and content instants.
          const knowns = [...new Set([...model.nodes, ...model.edges, ...model.invalidations].map((r) => r.known))];
          const asOfs = [...new Set([...captures, ...knowns].flatMap((c) => [c - 1, c, c + 1]))].sort((a, b) => a - b);
          const pick = <X>(xs: X[], n: number): X[] => {
            const stride = Math.max(1, Math.ceil(xs.length / n));
            return xs.filter((_, i) => (i + seed) % stride === 0);
          };
          const validAts: (number | undefined)[] = [
            undefined,
            ...pick([...new Set(Array.from({ length: 14 }, (_, k) => [at(k) - 1, at(k)]).flat()), captures[0] ?? 0], VALID_ATS),
          ];
          const spacesOf = (id: string): Set<string> => new Set(model.nodes.filter((n) => n.id === id).map((n) => n.space));
          crossing.invalidations += model.invalidations.filter((i) => spacesOf(i.id).size > 1).length;
          crossing.supersedes += model.edges.filter(
            (e) => e.type === 'SUPERSEDES' && [...spacesOf(e.s), ...spacesOf(e.t)].some((sp) => sp !== e.space),
          ).length;
          const filters = [{}, { space: 's1' }, { kind: 'claim' }, { space: 's2', category: 'c1' }];
          let turn = seed;
          for (const asOf of pick(asOfs, AS_OFS)) {
            for (const validAt of validAts) {
              for (const f of filters) {
                // One flag combination per read, rotating, so the grid costs what it did without them.
                const flags = FLAGS[turn++ % FLAGS.length] ?? {};
                const got = await read<ListMemoriesOutput>(listMemories, ctx, {
                  as_of: formatInstant(asOf),
                  valid_at: fmtOpt(validAt),
                  ...f,
                  ...flags,
                  limit: 1000,
                });
                const want = model.list(asOf, validAt, f, flags);
                const asked = `list as_of ${formatInstant(asOf)} valid_at ${fmtOpt(validAt)} ${JSON.stringify({ ...f, ...flags })}`;
                expect(
                  got.items.map((n) => [n.id, n.statement, n.known_at, n.valid.from, n.superseded_by, n.invalidated?.known_at ?? null]),
                  asked,
                ).toEqual(
                  want.items.map((n) => [
                    n.id,
                    n.statement,
                    formatInstant(n.known),
                    formatInstant(n.from),
                    model.supersededBy(n.id, asOf, validAt, f.space),
                    flags.include_invalidated ? (fmtOpt(model.invalidated(n.id, asOf)?.known) ?? null) : null,
                  ]),
                );
                expect(got.certificate.invalidated).toBe(want.invalidated || undefined);
                expect(got.masked).toEqual(nonZero(want.masked) ? want.masked : null);
                expect(got.certificate.masked).toEqual(nonZero(want.masked));
                expect(got.certificate.backfill).toEqual(expectedBackfill(want.items));
                expect(got.certificate.as_of).toBe(formatInstant(asOf));
              }
              for (const id of [...IDS, 'zz']) {
                const space = id === 'a' ? 's1' : undefined;
                const got = await read<GetMemoryOutput>(getMemory, ctx, {
                  id,
                  as_of: formatInstant(asOf),
                  valid_at: fmtOpt(validAt),
                  space,
                });
                const want = model.get(id, asOf, validAt, space);
                const retracted = want.versions.length > 0 && model.invalidated(id, asOf) !== undefined;
                expect(got.reason).toBe(retracted ? 'invalidated' : want.reason);
                const item = retracted ? null : want.item;
                expect(got.item ? [got.item.id, got.item.statement, got.item.valid.from, got.item.superseded_by] : null).toEqual(
                  item ? [item.id, item.statement, formatInstant(item.from), model.supersededBy(id, asOf, validAt, space)] : null,
                );
                expect(got.versions.map((v) => v.known_at)).toEqual(want.versions.map((v) => formatInstant(v.known)));
                expect(got.edges.out.map((e) => [e.target_id, e.edge_type, e.asserted_at])).toEqual(
                  want.out.map((e) => [e.t, e.type, formatInstant(e.asserted)]),
                );
                expect(got.edges.in.map((e) => [e.source_id, e.edge_type, e.asserted_at])).toEqual(
                  want.in.map((e) => [e.s, e.type, formatInstant(e.asserted)]),
                );
                expect(got.certificate.masked).toEqual(nonZero({ node: want.maskedNode, edge: want.maskedEdge }));
                expect(got.certificate.backfill).toEqual(expectedBackfill([...want.versions, ...want.in, ...want.out]));
              }
            }
          }
          // Paging with a small limit walks the same rows as one large page.
          const now = formatInstant(ledger.now());
          const all = await read<ListMemoriesOutput>(listMemories, ctx, { as_of: now, limit: 1000 });
          const paged: string[] = [];
          let cursor: string | undefined;
          do {
            const page = await read<ListMemoriesOutput>(listMemories, ctx, { as_of: now, limit: 3, cursor });
            paged.push(...page.items.map((n) => `${n.id}@${n.captured_at}`));
            cursor = page.next_cursor ?? undefined;
          } while (cursor);
          expect(paged).toEqual(all.items.map((n) => `${n.id}@${n.captured_at}`));
        }),
        {
          numRuns: RUNS,
          seed: process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : undefined,
          path: process.env.PROPERTY_PATH || undefined,
          // A slow shrink must print its counterexample (shrunk so far, with its seed and path) before the
          // test's own time limit.
          interruptAfterTimeLimit: TIME_MS,
          markInterruptAsFailure: false,
        },
      );
      console.log(
        `property: ${RUNS} runs, ${operations} row writes checked; invalidations ${JSON.stringify(Object.fromEntries(invalidationOutcomes))}`,
      );
      expect(operations).toBeGreaterThanOrEqual(FULL ? RUNS * 40 : 0);
      // The generator must reach every outcome of an invalidation, or the model's rules go unchecked.
      if (FULL)
        for (const kind of ['written', 'already', 'not_found', 'bad_backfill'])
          expect(invalidationOutcomes.get(kind) ?? 0).toBeGreaterThan(0);
      // Reads of one space ran on views reloaded after evictions, with rows that cross spaces.
      console.log(
        `property: ${spaceReads} space reads, ${ledger.residentStats().evictions} evictions, ${ledger.residentStats().reloads} reloads; ` +
          `invalidations of ids in two spaces ${crossing.invalidations}, SUPERSEDES edges leaving their space ${crossing.supersedes}`,
      );
      expect(spaceReads).toBeGreaterThan(0);
      expect(ledger.residentStats().reloads).toBeGreaterThan(0);
      // Writes were planned against the views of the spaces their ids live in (the tenant is evicted
      // before reads, so it is seldom resident when a write comes).
      const plans = ledger.planStats();
      console.log(`property: writes planned ${JSON.stringify(plans)}`);
      expect(plans.spaces).toBeGreaterThan(0);
      if (FULL) {
        expect(crossing.invalidations).toBeGreaterThan(0);
        expect(crossing.supersedes).toBeGreaterThan(0);
      }
    },
    TIME_MS + 120_000,
  );

  it('another tenant reads nothing of these rows', async () => {
    const ctx: Context = { ledger, tenant: 'stranger', services: { version: 'test' } };
    const got = await read<GetMemoryOutput>(getMemory, ctx, { id: 'a', as_of: formatInstant(ledger.now()) });
    expect(got.reason).toBe('absent');
    const list = await read<ListMemoriesOutput>(listMemories, ctx, { as_of: formatInstant(ledger.now()) });
    expect(list.items).toEqual([]);
    expect(list.masked).toBeNull();
  });
});
