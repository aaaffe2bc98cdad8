// The words a block is also found by: those of the blocks linked to it when it was written. A short
// reply ("Yes, last Saturday!") names nothing; its topic is in the turn it answers, linked to it by the
// writer. The rows used are those the block's own version could be read with: known no later than it and
// written before it or in the same write (same captured_at), so a read that sees the block sees them too
// (no leak through the context) and a rebuild from the ledger indexes the same words.
import type { TenantView } from '../../read/tenant-view.ts';
import { UnionView } from '../../read/union-view.ts';
import type { NodeVersion } from '../../types.ts';
import { enabled } from './mechanisms.ts';
import { grownPerView } from '../copies/view-scan.ts';

/**
 * Linked blocks whose words are added, the nearest in write order first. On LoCoMo 1-5 (a turn linked to
 * the turns before and after it, recall_any@10): 1 0.796, 2 0.817, 4 0.825, 6 0.825.
 */
export const CONTEXT_NEIGHBOURS = 4;
/** Characters taken from each linked block. */
const CONTEXT_CHARS = 400;

const readableWith = (r: { seq: number; known_at: number; captured_at: number }, n: NodeVersion): boolean =>
  r.known_at <= n.known_at && (r.seq < n.seq || r.captured_at === n.captured_at);

/** Messages parsed from episodes' payloads (searches read them again for every candidate). */
const parsed = new WeakMap<NodeVersion, string | null>();

/** The text an episode stands for: its message, when extraction kept it, else its name. */
export function messageText(n: NodeVersion): string | null {
  if (n.kind !== 'episode' || !n.payload.includes('"content"')) return n.statement;
  let text = parsed.get(n);
  if (text === undefined) {
    try {
      const content: unknown = (JSON.parse(n.payload) as Record<string, unknown>).content;
      text = typeof content === 'string' && content !== '' ? content : n.statement;
    } catch {
      text = n.statement;
    }
    parsed.set(n, text);
  }
  return text;
}

/**
 * Messages written in one request are one exchange, as linked turns are: a reply ("Super good! Might be my
 * new favourite") is about the message before it. Episodes of one write, per space, in commit order, kept
 * per view and grown as rows arrive (with each row's place in its write); all share the write's known_at
 * and captured_at, so each is readable with the others and with nothing written later.
 */
interface Writes {
  byWrite: Map<string, NodeVersion[]>;
  /** seq → position in its write's list. */
  place: Map<number, number>;
}
const writeKey = (n: NodeVersion): string => `${n.space}\u001f${n.captured_at}`;

const writes = grownPerView<Writes>(
  () => ({ byWrite: new Map(), place: new Map() }),
  (w, r) => {
    if (r.kind !== 'episode') return;
    const list = w.byWrite.get(writeKey(r)) ?? [];
    if (list.length === 0) w.byWrite.set(writeKey(r), list);
    w.place.set(r.seq, list.length);
    list.push(r);
  },
);

/**
 * Messages either side of an episode in its write whose words it is indexed with. On LoCoMo 1-5, messages
 * mode (recall_any@10 / recall_all@10 / MRR; an episode indexed by its message in each): none 0.725 / 0.593
 * / 0.483; one before 0.783 / 0.657 / 0.533; one either side 0.783 / 0.657 / 0.533 (recall_any@25 0.830
 * against 0.816); two either side 0.816 / 0.691 / 0.544. With the same messages lifting each other (one
 * either side, search.ts): two either side 0.829 / 0.704 / 0.564, three 0.825 / 0.701 / 0.568.
 */
export const ADJACENT_MESSAGES: readonly [before: number, after: number] = [2, 2];

/** The episodes up to `before` ahead of and `after` behind `n` in its write (none for other kinds). */
export function exchangeOf(view: TenantView, n: NodeVersion, [before, after] = ADJACENT_MESSAGES): NodeVersion[] {
  if (n.kind !== 'episode' || !enabled('exchange')) return [];
  // The write is all in the episode's space: that space's view holds every episode of it, in commit order.
  const own = view.spaceViewOf(n.space);
  if (!own) return [];
  const w = writes(own);
  const at = w.place.get(n.seq);
  const write = w.byWrite.get(writeKey(n));
  if (at === undefined || !write) return [];
  return [...write.slice(Math.max(0, at - before), at), ...write.slice(at + 1, at + 1 + after)];
}

/** Statements of the blocks linked to `n` (either direction), as readable with `n`; '' when none. */
export function contextText(view: TenantView | UnionView, n: NodeVersion, max = CONTEXT_NEIGHBOURS): string {
  const from = view.edgesFrom(n.id);
  const to = view.edgesTo(n.id);
  // The exchange is the block's write, all in its own space: that space's view has every episode of it.
  const own = view instanceof UnionView ? view.views.find((v) => v.space === n.space) : view;
  const exchange = own ? exchangeOf(own, n) : [];
  // Most blocks have no link: no map and no closures, each of which costs a call to a naming helper per
  // row when run through tsx (the server from a source checkout, the bench).
  if (from.length === 0 && to.length === 0 && exchange.length === 0) return '';
  const found = new Map<string, NodeVersion>();
  const visit = (other: string): void => {
    if (other === n.id || found.has(other)) return;
    let best: NodeVersion | null = null;
    for (const v of view.versionsOf(other)) if (readableWith(v, n) && (best === null || v.seq > best.seq)) best = v;
    if (best?.statement) found.set(other, best);
  };
  for (const e of from) if (readableWith(e, n)) visit(e.target_id);
  for (const e of to) if (readableWith(e, n)) visit(e.source_id);
  const linked = [...found.values()].sort((a, b) => Math.abs(a.seq - n.seq) - Math.abs(b.seq - n.seq)).slice(0, max);
  return [...exchange, ...linked].map((m) => (messageText(m) ?? '').slice(0, CONTEXT_CHARS)).join(' ');
}
