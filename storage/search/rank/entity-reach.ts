// Blocks reached through the entities a query names. Extraction links each message's episode to the
// entities it names (MENTIONS); a question naming one ("What did Jon buy in Paris?") should reach the
// blocks that mention it even when their words match poorly (a pronoun, a short reply, a photo). The
// lookup uses the tenant's read model only (no index query): entity names are kept per view and grown as
// rows arrive, and every entity, edge and block used must be readable at the read's as_of, so a read
// never reaches a block through a mention learned later.
import type { TenantView } from '../../read/tenant-view.ts';
import type { Micros } from '../../time.ts';
import { edgeVisible } from '../../read/traverse.ts';
import type { EdgeType } from '../../types.ts';
import { knownAt } from '../../visibility.ts';
import type { Hit } from '../index-row.ts';
import { enabled } from './mechanisms.ts';
import { STOP_WORDS, words } from '../embed/text-features.ts';
import { grownPerView } from '../copies/view-scan.ts';

/** Longest entity name matched against the query, in words. */
const MAX_NAME_WORDS = 5;

/** The comparable form of a name: its words, as the query is split. */
export const nameKey = (name: string): string => words(name).join(' ');

/** Per view, entity name (its words, space-joined) → the ids of the entities carrying it. */
const entityNames = grownPerView(
  () => new Map<string, string[]>(),
  (byName, n) => {
    if (n.kind !== 'entity' || !n.statement) return;
    const key = nameKey(n.statement);
    const ws = key.split(' ');
    // A name made only of function words ("The", "It") names nothing a query could mean.
    if (key === '' || ws.length > MAX_NAME_WORDS || ws.every((w) => STOP_WORDS.has(w))) return;
    const ids = byName.get(key);
    if (!ids) byName.set(key, [n.id]);
    else if (!ids.includes(n.id)) ids.push(n.id);
  },
);

export interface EntityRead {
  asOf: Micros;
  validAt?: Micros | undefined;
  space?: string | undefined;
}

const MENTIONS_ONLY: ReadonlySet<EdgeType> = new Set<EdgeType>(['MENTIONS']);

/** Entity ids the query names (any run of its words equal to an entity's name) that the read can see. */
export function namedEntities(view: TenantView, query: string, r: EntityRead): string[] {
  const names = entityNames(view.entitySource());
  if (names.size === 0) return [];
  const ws = words(query);
  const found = new Set<string>();
  for (let i = 0; i < ws.length; i++) {
    let key = '';
    for (let j = i; j < Math.min(ws.length, i + MAX_NAME_WORDS); j++) {
      key = j === i ? ws[j]! : `${key} ${ws[j]!}`;
      for (const id of names.get(key) ?? []) {
        const seen = view.versionsOf(id).some((v) => knownAt(v, r.asOf) && (r.space === undefined || v.space === r.space));
        if (seen) found.add(id);
      }
    }
  }
  return [...found];
}

/**
 * The blocks that mention the entities the query names, each scored by the rarity of the entities it
 * mentions: Σ ln(1 + total / mentions(e)), so a name said twice outweighs one said in every other turn
 * (a speaker's). `total` is the number of blocks mentioning any of the named entities.
 */
export function mentioningBlocks(view: TenantView, entities: readonly string[], r: EntityRead): Map<string, number> {
  const by = new Map<string, Set<string>>();
  const all = new Set<string>();
  const mentions = { ...r, types: MENTIONS_ONLY };
  for (const id of entities) {
    const sources = new Set<string>();
    for (const e of view.edgesTo(id)) if (edgeVisible(e, mentions)) sources.add(e.source_id);
    by.set(id, sources);
    for (const s of sources) all.add(s);
  }
  const scores = new Map<string, number>();
  for (const sources of by.values()) {
    if (sources.size === 0) continue;
    const weight = Math.log(1 + all.size / sources.size);
    for (const s of sources) scores.set(s, (scores.get(s) ?? 0) + weight);
  }
  return scores;
}

/**
 * The ranked list of blocks reached through the entities the query names, for fusion beside the index's
 * lists: the rarest mentions first, then (among blocks mentioning the same names) the order the other
 * lists gave, then the latest written. `admit` drops blocks the read may not show. Empty when the query
 * names no entity, or the mechanism is off.
 */
export function entityList(
  view: TenantView,
  query: string,
  fused: readonly { id: string; score: number }[],
  admit: (id: string) => boolean,
  r: EntityRead,
  limit: number,
): Hit[] {
  if (!enabled('entities')) return [];
  const entities = namedEntities(view, query, r);
  if (entities.length === 0) return [];
  const prior = new Map(fused.map((f) => [f.id, f.score]));
  const seqOf = (id: string): number => view.versionsOf(id).at(-1)?.seq ?? 0;
  const ranked = [...mentioningBlocks(view, entities, r)]
    .map(([id, score]) => ({ id, score, prior: prior.get(id) ?? 0, seq: seqOf(id) }))
    .sort((a, b) => b.score - a.score || b.prior - a.prior || b.seq - a.seq);
  // A speaker's name can reach half the tenant: only the head is checked against the read's filters.
  const out: Hit[] = [];
  for (const { id, seq, score } of ranked) {
    if (out.length >= limit) break;
    if (admit(id)) out.push({ id, seq, score });
  }
  return out;
}
