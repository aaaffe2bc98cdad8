// The text an agent sees beside `structuredContent`. Many clients hand a model `content` only, so the text
// carries what a model needs to use the answer, compactly: a first line saying what the answer holds and
// against which instant (the certificate in one line; the space too when every block is in one), then one
// line per block with its id, kind, space, statement, dates, supersession and invalidation marks, and for
// searches the score and how an expansion was reached. structuredContent keeps the full JSON. The text is read off the body's shape, so an
// operation added later still gets a fitting rendering.
import type { AnyOperation } from '../../tools/operation.ts';

type Body = Record<string, unknown>;

/** A statement longer than this is cut in the text (structuredContent has it whole). */
const MAX_STATEMENT = 600;
const MAX_VALUE = 120;

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
const obj = (v: unknown): Body | null => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Body) : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

const SPACES = /\s{2,}|[\t\n\r\f\v]/;

function quoted(v: unknown, max = MAX_VALUE): string {
  const text = typeof v === 'string' ? v : (JSON.stringify(v) ?? 'null');
  const flat = SPACES.test(text) ? text.replace(/\s+/g, ' ') : text;
  return JSON.stringify(flat.length > max ? `${flat.slice(0, max)}…` : flat);
}

/** An instant as short as it stays exact: trailing zero fractions and a midnight time are dropped. */
export function shortInstant(v: unknown): string {
  const s = str(v);
  if (s === null) return String(v);
  // Rendered for every row of every answer: the common shapes without a regular expression.
  const t = s.endsWith('.000000Z') ? `${s.slice(0, -8)}Z` : s.endsWith('0Z') ? s.replace(/(\.\d*?[1-9])0+Z$/, '$1Z') : s;
  if (t.endsWith('T00:00:00Z')) return t.slice(0, 10);
  // Whole minutes (most conversation turns) without their seconds: ISO 8601 all the same, and two tokens
  // fewer on every line a model reads.
  return t.length === 20 && t.endsWith(':00Z') ? `${t.slice(0, 16)}Z` : t;
}

/** The certificate's clause: the instant applied and what it left out ("as of …; 3 hidden: learned later"). */
function certified(body: Body, superseded = 0): string {
  const c = obj(body.certificate);
  if (!c) return '';
  const parts: string[] = [];
  if (typeof c.as_of === 'string') parts.push(` as of ${c.as_of}`);
  const masked = obj(c.masked);
  const hidden = masked ? Object.values(masked).reduce<number>((n, v) => n + (typeof v === 'number' ? v : 0), 0) : 0;
  if (hidden > 0) parts.push(`; ${hidden} hidden (learned later)`);
  if (typeof c.invalidated === 'number' && c.invalidated > 0) parts.push(`; ${c.invalidated} invalidated left out`);
  if (superseded > 0) parts.push(`; ${superseded} superseded`);
  const backfill = obj(c.backfill);
  if (backfill && typeof backfill.rows === 'number') parts.push(`; ${plural(backfill.rows, 'row')} on a declared backfill instant`);
  if (typeof c.rules_as_of === 'string') parts.push(`; rules as of ${c.rules_as_of}`);
  return parts.join('');
}

/** One block: `[id] kind · space · "statement" · asserted … · valid … · superseded by … · INVALIDATED …`. */
export function nodeLine(node: Body, spaceSaid = false, kindSaid = false): string {
  const parts = [kindSaid ? `[${String(node.id)}]` : `[${String(node.id)}] ${String(node.kind)}`];
  if (!spaceSaid) parts.push(`space ${String(node.space)}`);
  if (node.statement !== null && node.statement !== undefined) parts.push(quoted(node.statement, MAX_STATEMENT));
  if (typeof node.category === 'string') parts.push(`category ${node.category}`);
  parts.push(`asserted ${shortInstant(node.asserted_at)}`);
  const valid = obj(node.valid);
  if (valid && (valid.from !== node.asserted_at || valid.to !== null))
    parts.push(`valid ${shortInstant(valid.from)} to ${valid.to === null ? 'open' : shortInstant(valid.to)}`);
  if (typeof node.fact_key === 'string') parts.push(`fact ${node.fact_key} = ${quoted(node.fact_value)}`);
  const by = list(node.superseded_by);
  if (by.length) parts.push(`SUPERSEDED by ${by.join(', ')}`);
  const inv = obj(node.invalidated);
  if (inv) parts.push(`INVALIDATED from ${shortInstant(inv.known_at)}: ${quoted(inv.reason)}`);
  return parts.join(' · ');
}

const supersededIn = (nodes: unknown[]): number => nodes.filter((n) => list(obj(n)?.superseded_by).length > 0).length;

/** The one space every block of an answer is in, said once on the first line instead of on every block. */
function oneSpace(nodes: unknown[]): string | null {
  const spaces = new Set(nodes.map((n) => obj(n)?.space));
  const [only] = spaces;
  return spaces.size === 1 && typeof only === 'string' ? only : null;
}

const inSpace = (space: string | null): string => (space === null ? '' : ` in space ${space}`);

/** The one kind every block of a list shares (a conversation's turns are all claims), said once. */
function oneKind(nodes: unknown[]): string | null {
  const kinds = new Set(nodes.map((n) => obj(n)?.kind));
  const [only] = kinds;
  return kinds.size === 1 && typeof only === 'string' ? only : null;
}

const allOf = (kind: string | null): string => (kind === null ? '' : `, every one a ${kind}`);

/** How an expansion was reached: the edge type and the block it came from. */
function reached(r: Body): string {
  const path = list(r.path);
  const from = path.length >= 2 ? String(path[path.length - 2]) : '?';
  return `via ${String(r.via)} from ${from}${r.depth === 1 ? '' : `, depth ${String(r.depth)}`}`;
}

function written(body: Body): string[] {
  const refused = list(body.refused).map((r) => obj(r) ?? {});
  const warnings = list(body.warnings).map((w) => obj(w) ?? {});
  const reasons = [...new Set(refused.map((r) => String(r.reason ?? '?')))];
  let head = `accepted ${String(body.accepted)}, refused ${refused.length}${reasons.length ? ` (${reasons.join(', ')})` : ''}`;
  if (warnings.length) head += `, ${plural(warnings.length, 'warning')}`;
  const episodes = list(body.episodes).map((e) => obj(e) ?? {});
  if (episodes.length) head += `, ${plural(episodes.length, 'episode')}`;
  const batch = obj(body.batch);
  if (batch) head += `; backfill declared at ${String(batch.declared_captured_at)}`;
  const lines = [head];
  const ids = list(body.ids);
  if (ids.length) lines.push(`written: ${ids.join(', ')}`);
  for (const r of refused) {
    const extra = Object.entries(r)
      .filter(([k]) => !['id', 'kind', 'reason'].includes(k))
      .map(([k, v]) => `${k} ${typeof v === 'string' ? v : JSON.stringify(v)}`);
    lines.push(
      `refused ${String(r.kind ?? 'row')} ${String(r.id ?? '')}: ${String(r.reason)}${extra.length ? ` (${extra.join('; ')})` : ''}`,
    );
  }
  for (const w of warnings) lines.push(`warning ${String(w.kind ?? 'row')} ${String(w.id ?? '')}: ${String(w.warning)}`);
  for (const e of episodes)
    lines.push(
      `message ${String(e.message)} → episode ${String(e.episode_id)}: ${plural(list(e.blocks).length, 'block')} (${list(e.blocks).join(', ')}), ${plural(list(e.entities).length, 'entity').replace(/entitys/, 'entities')}, ${plural(list(e.edges).length, 'edge')}`,
    );
  return lines;
}

function edgeLines(edges: Body | null): string[] {
  const out = list(edges?.out).map((e) => obj(e) ?? {});
  const into = list(edges?.in).map((e) => obj(e) ?? {});
  const lines: string[] = [];
  for (const e of out) lines.push(`edge out: ${String(e.edge_type)} → ${String(e.target_id)}${e.lag ? ` (lag ${String(e.lag)})` : ''}`);
  for (const e of into) lines.push(`edge in: ${String(e.source_id)} ${String(e.edge_type)} → this`);
  return lines;
}

function gotOne(body: Body): string[] {
  const item = obj(body.item);
  const versions = list(body.versions).map((v) => obj(v) ?? {});
  const edges = obj(body.edges);
  const links = list(edges?.in).length + list(edges?.out).length;
  if (!item) {
    const lines = [`no block${typeof body.reason === 'string' ? ` (${body.reason})` : ''}${certified(body)}`];
    const inv = obj(body.invalidation);
    if (inv) lines.push(`invalidated from ${shortInstant(inv.known_at)}: ${quoted(inv.reason)}`);
    return lines;
  }
  const lines = [
    `block ${String(item.id)} (${String(item.kind)}) ${quoted(item.statement, 60)}, ${plural(versions.length, 'version')}, ${plural(links, 'edge')}${certified(body)}`,
    nodeLine(item),
  ];
  if (versions.length > 1) for (const v of versions) if (v !== item) lines.push(`version: ${nodeLine(v)}`);
  return [...lines, ...edgeLines(edges)];
}

function resolved(body: Body): string[] {
  const candidates = list(body.candidates).map((c) => obj(c) ?? {});
  const fact = obj(body.certificate)?.fact;
  const head = fact === undefined ? '' : `${String(fact)}: `;
  const outcome = body.status === 'answered' ? `answered ${quoted(body.value)}` : `no answer (${String(body.reason)})`;
  const lines = [
    `${head}${outcome} by ${String(body.policy ?? 'no policy')} from ${plural(candidates.length, 'candidate')}${certified(body)}`,
  ];
  for (const c of candidates) {
    const by = list(c.superseded_by);
    lines.push(
      `candidate [${String(c.id)}] ${quoted(c.value)} · space ${String(c.space)} · source ${String(c.source)} · asserted ${shortInstant(c.asserted_at)}${by.length ? ` · SUPERSEDED by ${by.join(', ')}` : ''}`,
    );
  }
  return lines;
}

function searched(body: Body): string[] {
  const results = list(body.results).map((r) => obj(r) ?? {});
  const direct = results.filter((r) => r.match === 'direct').length;
  const nodes = results.map((r) => r.node);
  const space = oneSpace(nodes);
  const kind = results.length > 1 ? oneKind(nodes) : null;
  const lines = [
    `${plural(results.length, 'result')} (${direct} direct, ${results.length - direct} by expansion)${allOf(kind)}${inSpace(space)}${certified(body, supersededIn(nodes))}`,
  ];
  results.forEach((r, i) => {
    const how = r.match === 'expansion' ? ` · ${reached(r)}` : '';
    // Two decimals: the order is the list's own; the score only says how close the next one came.
    lines.push(
      `${i + 1}. ${nodeLine(obj(r.node) ?? {}, space !== null, kind !== null)} · score ${typeof r.score === 'number' ? r.score.toFixed(2) : '?'}${how}`,
    );
  });
  return lines;
}

function chained(body: Body): string[] {
  const chain = list(body.chain).map((l) => obj(l) ?? {});
  if (!chain.length) return [`empty chain (${String(body.reason ?? 'absent')})${certified(body)}`];
  const nodes = chain.map((l) => l.node);
  const space = oneSpace(nodes);
  const lines = [`chain of ${plural(chain.length, 'link')}${inSpace(space)}${certified(body, supersededIn(nodes))}`];
  for (const l of chain) {
    const how = l.via ? ` · ${reached(l)}` : '';
    lines.push(`${String(l.role)}: ${nodeLine(obj(l.node) ?? {}, space !== null)}${how}`);
  }
  return lines;
}

function lines(body: Body): string[] {
  if (typeof body.accepted === 'number') return written(body);
  if ('item' in body) return gotOne(body);
  if (typeof body.status === 'string' && 'candidates' in body) return resolved(body);
  if (Array.isArray(body.results)) return searched(body);
  if (Array.isArray(body.items)) {
    const items = list(body.items);
    const more = typeof body.next_cursor === 'string' ? `; more pages (pass cursor=${body.next_cursor})` : '';
    const space = oneSpace(items);
    return [
      `${plural(items.length, 'block')}${inSpace(space)}${certified(body, supersededIn(items))}${more}`,
      ...items.map((n) => nodeLine(obj(n) ?? {}, space !== null)),
    ];
  }
  if (Array.isArray(body.chain)) return chained(body);
  if (Array.isArray(body.spaces)) {
    const spaces = list(body.spaces).map((s) => obj(s) ?? {});
    return [
      `${plural(spaces.length, 'space')}${certified(body)}`,
      ...spaces.map(
        (s) =>
          `${String(s.space)}: ${plural(Number(s.nodes), 'node')}, ${plural(Number(s.edges), 'edge')}, known ${shortInstant(s.first_known_at)} to ${shortInstant(s.last_known_at)}`,
      ),
    ];
  }
  const invalidation = obj(body.invalidation);
  if (invalidation) {
    const again = list(body.warnings).length > 0 ? ' (already invalidated; nothing written)' : '';
    return [`invalidated ${String(invalidation.target_id)} from ${String(invalidation.known_at)}${again}: ${quoted(invalidation.reason)}`];
  }
  const declared = obj(body.declared);
  if (declared) {
    const order = list(declared.source_order);
    return [
      `fact ${String(declared.fact_key)} declared with policy ${String(declared.policy)} from ${String(declared.declared_at)}` +
        (list(declared.key_fields).length ? `; key fields ${list(declared.key_fields).join(', ')}` : '') +
        (order.length ? `; source order ${order.join(' > ')}` : ''),
    ];
  }
  return ['done'];
}

/** The tool's name and what the answer holds on the first line, then one line per block. */
export function summarize(op: AnyOperation, body: Body): string {
  const [head = 'done', ...rest] = lines(body).map((l) => l.replace(/[\r\n]+/g, ' '));
  return [`${op.name}: ${head}`, ...rest].join('\n');
}
