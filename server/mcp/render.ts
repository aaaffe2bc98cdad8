// The text an agent sees beside `structuredContent`: ONE line saying what the answer holds and against
// which instant, e.g. "list_memories: 12 blocks as of 2024-03-01T…Z; 3 hidden (learned later)". The JSON
// is in structuredContent; repeating it as text would double what a model has to read. The line is read
// off the body's shape, so an operation added later still gets a fitting summary.
import type { AnyOperation } from '../../tools/operation.ts';

type Body = Record<string, unknown>;

const MAX_LINE = 300;

const list = (v: unknown): unknown[] | null => (Array.isArray(v) ? v : null);
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
const obj = (v: unknown): Body | null => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Body) : null);

function quoted(v: unknown, max = 60): string {
  const text = typeof v === 'string' ? v : (JSON.stringify(v) ?? 'null');
  return JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
}

/** The certificate's clause: the instant applied and what it left out. */
function certified(body: Body): string {
  const c = obj(body.certificate);
  if (!c) return '';
  const parts: string[] = [];
  if (typeof c.as_of === 'string') parts.push(` as of ${c.as_of}`);
  const masked = obj(c.masked);
  const hidden = masked ? Object.values(masked).reduce<number>((n, v) => n + (typeof v === 'number' ? v : 0), 0) : 0;
  if (hidden > 0) parts.push(`; ${hidden} hidden (learned later)`);
  if (typeof c.invalidated === 'number' && c.invalidated > 0) parts.push(`; ${c.invalidated} invalidated left out`);
  const backfill = obj(c.backfill);
  if (backfill && typeof backfill.rows === 'number') parts.push(`; ${plural(backfill.rows, 'row')} on a declared backfill instant`);
  return parts.join('');
}

function written(body: Body): string {
  const refused = list(body.refused) ?? [];
  const warnings = list(body.warnings) ?? [];
  const reasons = [...new Set(refused.map((r) => String(obj(r)?.reason ?? '?')))];
  let line = `accepted ${String(body.accepted)}, refused ${refused.length}${reasons.length ? ` (${reasons.join(', ')})` : ''}`;
  if (warnings.length) line += `, ${plural(warnings.length, 'warning')}`;
  const episodes = list(body.episodes);
  if (episodes?.length) line += `, ${plural(episodes.length, 'episode')}`;
  const batch = obj(body.batch);
  if (batch) line += `; backfill declared at ${String(batch.declared_captured_at)}`;
  return line;
}

function gotOne(body: Body): string {
  const item = obj(body.item);
  const versions = list(body.versions)?.length ?? 0;
  const edges = obj(body.edges);
  const links = (list(edges?.in)?.length ?? 0) + (list(edges?.out)?.length ?? 0);
  if (!item) return `no block${typeof body.reason === 'string' ? ` (${body.reason})` : ''}${certified(body)}`;
  return `block ${String(item.id)} (${String(item.kind)}) ${quoted(item.statement)}, ${plural(versions, 'version')}, ${plural(links, 'edge')}${certified(body)}`;
}

function resolved(body: Body): string {
  const n = list(body.candidates)?.length ?? 0;
  const fact = obj(body.certificate)?.fact;
  const head = fact === undefined ? '' : `${String(fact)}: `;
  const outcome = body.status === 'answered' ? `answered ${quoted(body.value)}` : `no answer (${String(body.reason)})`;
  return `${head}${outcome} by ${String(body.policy ?? 'no policy')} from ${plural(n, 'candidate')}${certified(body)}`;
}

function searched(results: unknown[], body: Body): string {
  const direct = results.filter((r) => obj(r)?.match === 'direct').length;
  return `${plural(results.length, 'result')} (${direct} direct, ${results.length - direct} by expansion)${certified(body)}`;
}

function line(body: Body): string {
  if (typeof body.accepted === 'number') return written(body);
  if ('item' in body) return gotOne(body);
  if (typeof body.status === 'string' && 'candidates' in body) return resolved(body);
  const results = list(body.results);
  if (results) return searched(results, body);
  const items = list(body.items);
  if (items)
    return `${plural(items.length, 'block')}${certified(body)}${typeof body.next_cursor === 'string' ? '; more pages (pass next_cursor)' : ''}`;
  const chain = list(body.chain);
  if (chain)
    return chain.length
      ? `chain of ${plural(chain.length, 'link')}${certified(body)}`
      : `empty chain (${String(body.reason ?? 'absent')})${certified(body)}`;
  const spaces = list(body.spaces);
  if (spaces) return `${plural(spaces.length, 'space')}${certified(body)}`;
  const invalidation = obj(body.invalidation);
  if (invalidation) {
    const again = (list(body.warnings) ?? []).length > 0 ? ' (already invalidated; nothing written)' : '';
    return `invalidated ${String(invalidation.target_id)} from ${String(invalidation.known_at)}${again}: ${quoted(invalidation.reason)}`;
  }
  const declared = obj(body.declared);
  if (declared)
    return `fact ${String(declared.fact_key)} declared with policy ${String(declared.policy)} from ${String(declared.declared_at)}`;
  return 'done';
}

/** One line: the tool's name, then what the answer holds. */
export function summarize(op: AnyOperation, body: Body): string {
  const text = `${op.name}: ${line(body)}`.replace(/[\r\n]+/g, ' ');
  return text.length > MAX_LINE ? `${text.slice(0, MAX_LINE - 1)}…` : text;
}
