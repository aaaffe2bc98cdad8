// The short text an agent sees beside `structuredContent`: one summary line, then the JSON (capped, since
// structuredContent always carries the whole answer).
import type { AnyOperation } from '../../tools/operation.ts';

const MAX_TEXT = 50_000;

function count(v: unknown): number | null {
  return Array.isArray(v) ? v.length : null;
}

export function summarize(op: AnyOperation, body: Record<string, unknown>): string {
  const parts: string[] = [];
  if (typeof body.accepted === 'number') {
    parts.push(`accepted ${body.accepted}`, `refused ${count(body.refused) ?? 0}`, `warnings ${count(body.warnings) ?? 0}`);
  }
  if ('item' in body) {
    const item = body.item as { id?: unknown } | null;
    parts.push(item ? `item ${String(item.id)}` : `no item${typeof body.reason === 'string' ? ` (${body.reason})` : ''}`);
  }
  for (const list of ['items', 'results', 'chain', 'candidates', 'versions'] as const) {
    const n = count(body[list]);
    if (n !== null) parts.push(`${n} ${list}`);
  }
  if (typeof body.status === 'string') parts.push(`status ${body.status}`);
  if (typeof body.reason === 'string' && !('item' in body)) parts.push(`reason ${body.reason}`);
  if (typeof body.next_cursor === 'string') parts.push('more pages (next_cursor)');
  const certificate = body.certificate as { as_of?: unknown; masked?: unknown } | undefined;
  if (certificate?.as_of) parts.push(`as_of ${String(certificate.as_of)}`);
  if (certificate?.masked) parts.push(`masked ${JSON.stringify(certificate.masked)}`);
  return `${op.name}: ${parts.join(', ') || 'done'}`;
}

export function renderText(op: AnyOperation, body: Record<string, unknown>): string {
  const json = JSON.stringify(body);
  const shown = json.length > MAX_TEXT ? `${json.slice(0, MAX_TEXT)}… (truncated; structuredContent holds the whole answer)` : json;
  return `${summarize(op, body)}\n${shown}`;
}
