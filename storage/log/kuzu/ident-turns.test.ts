import { describe, expect, it } from 'vitest';
import { identKey } from '../../commit-group.ts';
import { IDENT_LOOKUPS_PER_TURN, IdentTurns, type IdentTurnsDeps } from './ident-turns.ts';
import { heldTurns } from '../../../test/helpers/held-turns.ts';

/** An engine of Ident keys and their spaces, a journal of pairs, and turns run one after another as the reader runs them. */
function fakeStore(stored: Map<string, string[]>, journal: [string, string][] = []) {
  const turns = heldTurns();
  const seen = { engineCalls: 0, keysPerTurn: [] as number[] };
  const deps: IdentTurnsDeps = {
    turn: turns.turn,
    stored: async (keys) => {
      seen.engineCalls++;
      await new Promise((r) => setTimeout(r, 1));
      if (keys.some((key) => key.endsWith('broken'))) throw new Error('engine failed');
      return new Map(keys.filter((key) => stored.has(key)).map((key) => [key, stored.get(key)!]));
    },
    journaled: (keys, pair) => {
      seen.keysPerTurn.push(keys.size);
      for (const [key, spaceKey] of journal) if (keys.has(key)) pair(key, spaceKey);
    },
  };
  return {
    deps,
    seen,
    /** Holds every turn until `release` runs. */
    hold: turns.hold,
  };
}

describe('IdentTurns', () => {
  it('answers the ids asked while a turn waits in one turn, stored and journaled, in one query of the engine', async () => {
    const tenant = 'app "x"';
    const k = (id: string): string => identKey(tenant, id);
    const stored = new Map<string, string[]>(Array.from({ length: 40 }, (_, i) => [k(`id${i}`), [`user:${i % 3}`]]));
    const store = fakeStore(stored, [
      [k('id1'), identKey(tenant, 'user:9')],
      [k('new'), identKey(tenant, 'user:7')],
    ]);
    const turns = new IdentTurns(store.deps);
    const release = store.hold();
    const asked = ['id0', 'id1', 'new', 'nowhere', ...Array.from({ length: 20 }, (_, i) => `id${i + 2}`)];
    const answers = asked.map((id) => turns.spaces(tenant, [k(id)]));
    release();
    const found = await Promise.all(answers);
    expect(found[0]!.get(k('id0'))).toEqual(new Set(['user:0']));
    expect(found[1]!.get(k('id1'))).toEqual(new Set(['user:1', 'user:9']));
    expect(found[2]!.get(k('new'))).toEqual(new Set(['user:7']));
    expect(found[3]!.get(k('nowhere'))).toEqual(new Set());
    asked.forEach((id, i) => expect(found[i]!.has(k(id))).toBe(true));
    // 24 callers: two turns of at most IDENT_LOOKUPS_PER_TURN ids, not one turn each.
    expect(turns.turns).toBe(Math.ceil(asked.length / IDENT_LOOKUPS_PER_TURN));
    expect(store.seen.keysPerTurn).toEqual([IDENT_LOOKUPS_PER_TURN, asked.length - IDENT_LOOKUPS_PER_TURN]);
    expect(turns.lookups).toBe(asked.length);
    expect(store.seen.engineCalls).toBe(turns.turns); // one query of the engine a turn
  });

  it('lets a single id asked behind a batch wait for one turn of it, not for the whole batch', async () => {
    const store = fakeStore(new Map());
    const turns = new IdentTurns(store.deps);
    const order: string[] = [];
    const batch = (async () => {
      const keys = Array.from({ length: 5 * IDENT_LOOKUPS_PER_TURN }, (_, i) => identKey('t', `b${i}`));
      for (let at = 0; at < keys.length; at += IDENT_LOOKUPS_PER_TURN) await turns.spaces('t', keys.slice(at, at + IDENT_LOOKUPS_PER_TURN));
      order.push('batch');
    })();
    await new Promise((r) => setTimeout(r, 0));
    const one = turns.spaces('t', [identKey('t', 'one')]).then(() => order.push('one'));
    await Promise.all([batch, one]);
    expect(order).toEqual(['one', 'batch']);
    expect(() =>
      turns.spaces(
        't',
        Array.from({ length: IDENT_LOOKUPS_PER_TURN + 1 }, (_, i) => `k${i}`),
      ),
    ).toThrow(RangeError);
  });

  it("fails a failed turn's callers only: the turn queued behind it answers", async () => {
    const store = fakeStore(new Map([[identKey('t', 'a'), ['s']]]));
    const turns = new IdentTurns(store.deps);
    const full = Array.from({ length: IDENT_LOOKUPS_PER_TURN - 1 }, (_, i) => identKey('t', `f${i}`));
    const broken = turns.spaces('t', [...full, identKey('t', 'broken')]);
    const sharing = turns.spaces('t', [identKey('t', 'a')]); // past the first turn's room: the next one
    await expect(broken).rejects.toThrow('engine failed');
    expect((await sharing).get(identKey('t', 'a'))).toEqual(new Set(['s']));
    expect(turns.turns).toBe(2);
  });
});
