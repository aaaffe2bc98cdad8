// A read by id without a space (get_memory, why) when the tenant's view is not resident: answered from
// the views of the spaces holding the ids it reads, never from the whole tenant. The answer is run over a
// view that joins the spaces loaded so far and notes every id it is asked about; the spaces holding those
// ids are looked up (the store's index by id) and the answer is run again with the missing ones loaded,
// until it asked about no id whose spaces are not all there. A why walk thus widens one hop per round.
// What get and why read of the view is by id only (versions, edges, SUPERSEDES edges and invalidations of
// one id), and each is held whole by the spaces holding that id (see idPlacements), so the final answer
// is the one the tenant's view gives; anything else the view is asked throws, so a read that would need
// the tenant's lists cannot quietly answer from a part of them.
//
// A resolve without a space reads the same way, and two things more: the rows carrying its fact key (held
// whole by the spaces holding such a row, looked up by fact key), and the tenant's declarations, which
// every view of the tenant holds: here its rules view (storage/read/resident-views.ts).
import { TenantView } from './tenant-view.ts';
import type { Declaration, EdgeRecord, Invalidation, NodeVersion, Verdict } from '../types.ts';

/**
 * Spaces a read by id may load before the tenant's view is loaded instead. The spaces of a round are
 * loaded together (a query per table for 64 of them at a time, ~3-7 ms a space here against 8-20 ms
 * loaded one by one). Loading the tenant instead costs what the whole application holds (minutes and
 * gigabytes for millions of rows), so only a read reaching this many spaces, a good part of most
 * tenants, gives up on them: a search across spaces with `limit` 100 reaches about 100; a get reaches
 * many only for an id linked from many spaces. Each lookup of the joined view asks every view loaded
 * (a map lookup each), which is what bounds the count.
 */
export const MAX_READ_SPACES = 512;

/**
 * Rounds of look-up-and-load before the tenant's view is loaded instead. A why of depth d needs about d+2
 * (one hop a round); more come only from lookups outdated by commits landing meanwhile.
 */
export const MAX_READ_ROUNDS = 24;

const NONE: readonly never[] = Object.freeze([]);

/** What a read asked of one id: every space holding it (its versions and edges), or any one (its invalidations). */
type Need = 'all' | 'any';

function joined<R extends { seq: number }>(lists: readonly (readonly R[])[]): readonly R[] {
  const full = lists.filter((l) => l.length > 0);
  if (full.length <= 1) return full[0] ?? NONE;
  return full.flat().sort((a, b) => a.seq - b.seq);
}

/**
 * The views of some spaces of one tenant read as the tenant's view, for reads by id: each node version
 * and edge is held by its own space's view only; an invalidation by every space holding its node, so it
 * is kept once. Notes each id asked about.
 */
export class SpacesByIdView extends TenantView {
  readonly #views: readonly TenantView[];
  readonly #rules: TenantView | undefined;
  readonly #asked = new Map<string, Need>();
  readonly #facts = new Set<string>();
  readonly #versions = new Map<string, readonly NodeVersion[]>();
  readonly #from = new Map<string, readonly EdgeRecord[]>();
  readonly #to = new Map<string, readonly EdgeRecord[]>();

  /** `rules`: a view of the tenant answering its declarations and verdicts (any view of it holds them all). */
  constructor(tenant: string, views: readonly TenantView[], rules?: TenantView) {
    super(tenant);
    this.#views = views;
    this.#rules = rules;
  }

  /** The ids asked about so far, with what was asked of each. */
  asked(): ReadonlyMap<string, Need> {
    return this.#asked;
  }

  /** The fact keys whose rows were asked for so far. */
  askedFacts(): ReadonlySet<string> {
    return this.#facts;
  }

  override factRows(factKey: string): readonly NodeVersion[] {
    this.#facts.add(factKey);
    return joined(this.#views.map((v) => v.factRows(factKey)));
  }

  override declarations(): readonly Declaration[] {
    return this.#rules ? this.#rules.declarations() : refuse('declarations');
  }

  override verdicts(): readonly Verdict[] {
    return this.#rules ? this.#rules.verdicts() : refuse('verdicts');
  }

  override hasVerdictHash(hash: string): boolean {
    return this.#rules ? this.#rules.hasVerdictHash(hash) : refuse('hasVerdictHash');
  }

  override partial(): boolean {
    return true;
  }

  /** The loaded view of `space`: a shown row's space is loaded, as every space holding its id is. */
  override spaceViewOf(space: string): TenantView | undefined {
    return this.#views.find((v) => v.space === space);
  }

  #ask(id: string, need: Need): void {
    if (need === 'all' || !this.#asked.has(id)) this.#asked.set(id, need);
  }

  override versionsOf(id: string): readonly NodeVersion[] {
    return this.#joinedOf(this.#versions, id, (v) => v.versionsOf(id));
  }

  override edgesFrom(id: string): readonly EdgeRecord[] {
    return this.#joinedOf(this.#from, id, (v) => v.edgesFrom(id));
  }

  override edgesTo(id: string): readonly EdgeRecord[] {
    return this.#joinedOf(this.#to, id, (v) => v.edgesTo(id));
  }

  /**
   * One id's rows over every view, joined once per round: a search asks each candidate's versions and edges
   * many times (lift, coverage, expansion), and each join visits every loaded space's view.
   */
  #joinedOf<R extends { seq: number }>(memo: Map<string, readonly R[]>, id: string, of: (v: TenantView) => readonly R[]): readonly R[] {
    this.#ask(id, 'all');
    let rows = memo.get(id);
    if (rows === undefined) memo.set(id, (rows = joined(this.#views.map(of))));
    return rows;
  }

  override supersedingEdges(id: string): readonly EdgeRecord[] {
    this.#ask(id, 'all');
    return joined(this.#views.map((v) => v.supersedingEdges(id)));
  }

  override invalidationsOf(id: string): readonly Invalidation[] {
    this.#ask(id, 'any');
    const all = joined(this.#views.map((v) => v.invalidationsOf(id)));
    return all.filter((row, i) => i === 0 || all[i - 1]!.seq !== row.seq);
  }

  /**
   * The latest knowledge instant of a node or edge in these spaces. Why skips its second walk (what as_of
   * hid) when as_of is past it: then nothing in these spaces is hidden, and a walk over every committed
   * row would take the same steps as the one made, so it would read only these spaces too.
   */
  override latestBlockKnownAt(): number {
    let top = Number.NEGATIVE_INFINITY;
    for (const v of this.#views) top = Math.max(top, v.latestBlockKnownAt());
    return top;
  }

  override latestKnownAt(): number {
    return refuse('latestKnownAt');
  }
  override latestInvalidationKnownAt(): number {
    return refuse('latestInvalidationKnownAt');
  }
  override nodesIn(): readonly NodeVersion[] {
    return refuse('nodesIn');
  }
  override edgesOfSpace(): readonly EdgeRecord[] {
    return refuse('edgesOfSpace');
  }
  override supersedesEdges(): readonly EdgeRecord[] {
    return refuse('supersedesEdges');
  }
  override edgeByIdentity(): EdgeRecord | undefined {
    return refuse('edgeByIdentity');
  }
  override hasEdgeHash(): boolean {
    return refuse('hasEdgeHash');
  }
  override batch(): undefined {
    return refuse('batch');
  }
  override invalidations(): readonly Invalidation[] {
    return refuse('invalidations');
  }
  override rowsOfSpace(): never {
    return refuse('rowsOfSpace');
  }
  override spaceNames(): never {
    return refuse('spaceNames');
  }
  override size(): never {
    return refuse('size');
  }
  override addNode(): void {
    refuse('addNode');
  }
  override addEdge(): void {
    refuse('addEdge');
  }
  override addBatch(): void {
    refuse('addBatch');
  }
  override addDeclaration(): void {
    refuse('addDeclaration');
  }
  override addVerdict(): void {
    refuse('addVerdict');
  }
  override addInvalidation(): void {
    refuse('addInvalidation');
  }
}

function refuse(what: string): never {
  throw new Error(`a read by id over some spaces' views asked for ${what}, which only the tenant's view answers`);
}

/** How a read by id finds and holds spaces; the ledger gives it. */
export interface SpaceSource {
  /** The spaces holding each id now, and a mark to ask later what commits since brought them into. */
  lookUp(ids: readonly string[]): Promise<{ held: Map<string, Set<string>>; since: number }>;
  /** The spaces commits after `since` brought any of `ids` into, or null when that cannot be told. */
  movedSince(since: number, ids: readonly string[]): Set<string> | null;
  /** The same two for the spaces holding a row carrying a fact key (a read asking for factRows). */
  lookUpFacts?(factKeys: readonly string[]): Promise<{ held: Map<string, Set<string>>; since: number }>;
  factsMovedSince?(since: number, factKeys: readonly string[]): Set<string> | null;
  /** Pins the views of `spaces` (released by the returned function) and loads those not resident, together. */
  hold(spaces: readonly string[]): Promise<{ views: TenantView[]; release: () => void }>;
}

/**
 * Runs `answer` (free of effects: it may run several times) over the views of the spaces holding every id
 * it reads, loading them round by round. Returns its answer, or `undefined` when that needs more than
 * `maxSpaces` spaces or MAX_READ_ROUNDS rounds: the caller then answers from the tenant's view. A
 * synchronous answer is checked with no wait after it; an asynchronous one (a search, which gives the loop
 * turns) reads only rows known at its as_of, which commits landing meanwhile do not change. `join` makes
 * each round's view of the spaces loaded so far.
 */
export async function answerFromSpaces<T>(
  tenant: string,
  source: SpaceSource,
  answer: (view: SpacesByIdView) => T | Promise<T>,
  opts: { maxSpaces?: number; join?: (views: readonly TenantView[]) => SpacesByIdView; rules?: TenantView } = {},
): Promise<{ value: T; spaces: number } | undefined> {
  const maxSpaces = opts.maxSpaces ?? MAX_READ_SPACES;
  const join = opts.join ?? ((views: readonly TenantView[]) => new SpacesByIdView(tenant, views, opts.rules));
  const views = new Map<string, TenantView>();
  const releases: (() => void)[] = [];
  // Each id looked up: the spaces holding it then, and the mark of commits at that lookup.
  const looked = new Map<string, { spaces: Set<string>; since: number }>();
  // The same for each fact key.
  const lookedFacts = new Map<string, { spaces: Set<string>; since: number }>();
  try {
    for (let round = 0; round < MAX_READ_ROUNDS; round++) {
      const view = join([...views.values()]);
      const out = answer(view);
      const value = out instanceof Promise ? await out : out;
      // Checked right after the answer, with no wait in between: what holds the ids now.
      const unknown: string[] = [];
      const wanted = new Set<string>();
      // A fact key's rows are needed whole: every space holding one.
      const unknownFacts: string[] = [];
      for (const fact of view.askedFacts()) {
        const seen = lookedFacts.get(fact);
        const moved = seen && source.factsMovedSince ? source.factsMovedSince(seen.since, [fact]) : null;
        if (!seen || !moved) {
          unknownFacts.push(fact);
          continue;
        }
        for (const s of [...seen.spaces, ...moved]) if (!views.has(s)) wanted.add(s);
      }
      for (const [id, need] of view.asked()) {
        const seen = looked.get(id);
        const moved = seen ? source.movedSince(seen.since, [id]) : null;
        if (!seen || !moved) {
          unknown.push(id);
          continue;
        }
        const spaces = new Set([...seen.spaces, ...moved]);
        if (need === 'all') {
          for (const s of spaces) if (!views.has(s)) wanted.add(s);
        } else if (spaces.size > 0 && ![...spaces].some((s) => views.has(s))) wanted.add(spaces.values().next().value as string);
      }
      if (unknown.length === 0 && unknownFacts.length === 0 && wanted.size === 0) return { value, spaces: views.size };
      if (unknownFacts.length > 0) {
        if (!source.lookUpFacts) throw new Error('a read by id asked for the rows of a fact key, and nothing looks them up');
        const { held, since } = await source.lookUpFacts(unknownFacts);
        for (const fact of unknownFacts) {
          const spaces = held.get(fact) ?? new Set<string>();
          lookedFacts.set(fact, { spaces, since });
          for (const s of spaces) if (!views.has(s)) wanted.add(s);
        }
      }
      if (unknown.length > 0) {
        const { held, since } = await source.lookUp(unknown);
        for (const id of unknown) {
          const spaces = held.get(id) ?? new Set<string>();
          looked.set(id, { spaces, since });
          if (view.asked().get(id) === 'all') {
            for (const s of spaces) if (!views.has(s)) wanted.add(s);
          } else if (spaces.size > 0 && ![...spaces].some((s) => views.has(s) || wanted.has(s))) {
            wanted.add(spaces.values().next().value as string);
          }
        }
      }
      if (views.size + wanted.size > maxSpaces) return undefined;
      // The round's spaces are loaded together: one read of the store for all of them, not one each.
      const round = [...wanted];
      const held = await source.hold(round);
      releases.push(held.release);
      round.forEach((s, i) => views.set(s, held.views[i]!));
    }
    return undefined;
  } finally {
    for (const release of releases) release();
  }
}
