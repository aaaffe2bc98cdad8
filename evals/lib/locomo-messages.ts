// `--mode messages` of eval:locomo: every turn is written as a message (one request per session, with
// the session's backfill), so the server extracts episodes, claims, predictions, entities and links.
// The response's `episodes` says which blocks each turn produced; search hits are mapped back to turn
// ids through that record, as of the search's instant (a block said again in a later session maps to
// that later turn only once the later session is known).
import type { Conversation } from './locomo-data.ts';
import { iso, post, sessionEnd, turnInstant, turnStatement, type AfterSession, type Api } from './locomo-replay.ts';

type TurnLookup = (id: string, asOf: number) => string[];

/** conversation id → (node id, as_of) → the turn ids known by then to have produced it. */
export const turnsByNode = new Map<string, TurnLookup>();

interface MessagesResponse {
  accepted: number;
  refused: unknown[];
  episodes: { message: number; episode_id: string; blocks: string[]; entities: string[] }[];
}

export async function replayMessages(api: Api, c: Conversation, afterSession?: AfterSession): Promise<number> {
  const index = new Map<string, { turn: string; knownAt: number }[]>();
  turnsByNode.set(c.id, (id, asOf) => (index.get(id) ?? []).filter((x) => x.knownAt <= asOf).map((x) => x.turn));
  let rows = 0;
  for (const s of c.sessions) {
    if (s.turns.length === 0) continue;
    const messages = s.turns.map((t, i) => ({
      content: turnStatement(t),
      observed_at: iso(turnInstant(s, i)),
      source_description: `LoCoMo ${c.id} turn ${t.id}`,
    }));
    const knownAt = sessionEnd(s);
    const r = (await post(api, '/v1/memories', {
      space: `conversation:${c.id}`,
      messages,
      backfill: { declared_captured_at: iso(knownAt), reason: `LoCoMo ${c.id} session ${s.index}` },
    })) as MessagesResponse;
    if (r.refused.length > 0) throw new Error(`session ${s.index}: ${r.refused.length} messages refused: ${JSON.stringify(r.refused[0])}`);
    for (const e of r.episodes) {
      const turn = s.turns[e.message]?.id;
      if (!turn) continue;
      // Entities are shared by every turn naming them: mapping them back would flood the ranking.
      for (const id of new Set([e.episode_id, ...e.blocks])) {
        const list = index.get(id) ?? [];
        if (!list.some((x) => x.turn === turn)) list.push({ turn, knownAt });
        index.set(id, list);
      }
    }
    rows += r.accepted;
    await afterSession?.(s);
  }
  return rows;
}
