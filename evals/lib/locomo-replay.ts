// Replays a LoCoMo conversation through the public HTTP API and asks its questions through search.
// `--mode turns` writes each turn as one block; other modes (messages) reuse the search and scoring.
import type { Conversation, Session } from './locomo-data.ts';

export const iso = (epochSeconds: number): string => new Date(epochSeconds * 1000).toISOString();

/** The instant turn `i` of a session is asserted at: the session start plus i seconds. */
export const turnInstant = (s: Session, i: number): number => s.start + i;
export const sessionEnd = (s: Session): number => s.start + Math.max(0, s.turns.length - 1);
export const conversationEnd = (c: Conversation): number => Math.max(...c.sessions.map(sessionEnd));

/** Called after each session is written: the live replay asks its questions there, between writes. */
export type AfterSession = (s: Session) => Promise<void>;

export interface Api {
  base: string;
  key: string;
}

export async function post(api: Api, path: string, body: unknown): Promise<unknown> {
  const r = await fetch(`${api.base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${api.key}` },
    body: JSON.stringify(body),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${path}: ${r.status} ${text.slice(0, 500)}`);
  return JSON.parse(text) as unknown;
}

export function turnStatement(t: { speaker: string; text: string; caption: string | null }): string {
  return `${t.speaker}: ${t.text}${t.caption ? ` [shares a photo: ${t.caption}]` : ''}`;
}

/**
 * Writes every turn as a block, one request per session, declared as known at the session's last instant;
 * consecutive turns are linked CONCURRENT_SIGNAL.
 */
export async function replayTurns(api: Api, c: Conversation, afterSession?: AfterSession): Promise<number> {
  let rows = 0;
  for (const s of c.sessions) {
    if (s.turns.length === 0) continue;
    const nodes = s.turns.map((t, i) => ({
      id: t.id,
      kind: 'turn',
      statement: turnStatement(t),
      asserted_at: iso(turnInstant(s, i)),
      payload: { turn: t.id, session: s.index, speaker: t.speaker },
    }));
    // Consecutive turns are one exchange: linked as co-occurring, so a hit brings the turn it answers.
    const edges = s.turns.slice(1).map((t, i) => ({ source_id: s.turns[i]!.id, target_id: t.id, edge_type: 'CONCURRENT_SIGNAL' }));
    await post(api, '/v1/memories', {
      space: `conversation:${c.id}`,
      nodes,
      edges,
      backfill: { declared_captured_at: iso(sessionEnd(s)), reason: `LoCoMo ${c.id} session ${s.index}` },
    });
    rows += nodes.length;
    await afterSession?.(s);
  }
  return rows;
}

interface SearchResponse {
  results: { node: { id: string; payload: Record<string, unknown> }; score: number; match: string }[];
}

/**
 * Searches and maps the results, in order, to distinct turn ids (a result naming no turn is skipped);
 * `byNode` maps nodes whose payload names no turn (extracted blocks) to the turns known to have said them at `asOf`.
 */
export async function searchTurns(
  api: Api,
  query: string,
  asOf: number,
  limit: number,
  byNode?: (id: string, asOf: number) => string[],
): Promise<{ turns: string[]; ms: number }> {
  const t0 = performance.now();
  const r = (await post(api, '/v1/search', { query, as_of: iso(asOf), limit, depth: 1 })) as SearchResponse;
  const ms = performance.now() - t0;
  const turns: string[] = [];
  for (const x of r.results) {
    const p = x.node.payload;
    const ids =
      typeof p.turn === 'string'
        ? [p.turn]
        : Array.isArray(p.turns)
          ? p.turns.filter((v): v is string => typeof v === 'string')
          : (byNode?.(x.node.id, asOf) ?? []);
    for (const id of ids) if (!turns.includes(id)) turns.push(id);
  }
  return { turns, ms };
}
