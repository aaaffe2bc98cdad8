import { describe, expect, it } from 'vitest';
import { SPACE_LOADS_PER_TURN, SpaceLoadTurns, type SpaceLoadTurnsDeps } from './space-load-turns.ts';
import { heldTurns } from '../../../test/helpers/held-turns.ts';

/** A store whose spaces hold their own name as rows, read in turns run one after another, which `hold` stops. */
function fakeStore() {
  const turns = heldTurns();
  const reads: { tenant: string; spaces: string[] }[] = [];
  const deps: SpaceLoadTurnsDeps<string[]> = {
    turn: turns.turn,
    read: async (tenant, spaces) => {
      reads.push({ tenant, spaces: [...spaces] });
      await new Promise((r) => setTimeout(r, 1));
      if (spaces.includes('broken')) throw new Error('engine failed');
      return new Map(spaces.map((s) => [s, [`${tenant}/${s}`]]));
    },
  };
  return {
    deps,
    reads,
    /** Holds every turn until `release` runs. */
    hold: turns.hold,
  };
}

describe('SpaceLoadTurns', () => {
  it("reads one tenant's spaces asked while a turn waits in one read, each caller given its own spaces", async () => {
    const store = fakeStore();
    const turns = new SpaceLoadTurns(store.deps);
    const release = store.hold();
    const a = Array.from({ length: 10 }, (_, i) => turns.load('a', [`user:${i}`]));
    const both = turns.load('a', ['user:1', 'user:20']); // one space shared with another caller
    const b = turns.load('b', ['user:1']); // another tenant's space of the same name
    const a2 = turns.load('a', ['user:30']); // asked after b, still taken with a's
    release();
    const got = await Promise.all(a);
    got.forEach((rows, i) => expect([...rows]).toEqual([[`user:${i}`, [`a/user:${i}`]]]));
    expect([...(await both)]).toEqual([
      ['user:1', ['a/user:1']],
      ['user:20', ['a/user:20']],
    ]);
    expect([...(await b)]).toEqual([['user:1', ['b/user:1']]]);
    expect([...(await a2)]).toEqual([['user:30', ['a/user:30']]]);
    // Two turns, not thirteen: a's twelve distinct spaces read once, then b's.
    expect(store.reads.map((r) => [r.tenant, r.spaces.length])).toEqual([
      ['a', 12],
      ['b', 1],
    ]);
    expect(turns.turns).toBe(2);
    expect(turns.spaces).toBe(13);
  });

  it('reads at most SPACE_LOADS_PER_TURN spaces a turn, the first request whatever its size, in arrival order', async () => {
    const store = fakeStore();
    const turns = new SpaceLoadTurns(store.deps);
    const release = store.hold();
    const big = turns.load(
      'a',
      Array.from({ length: SPACE_LOADS_PER_TURN + 5 }, (_, i) => `big:${i}`),
    );
    const singles = Array.from({ length: SPACE_LOADS_PER_TURN + 1 }, (_, i) => turns.load('a', [`one:${i}`]));
    release();
    expect((await big).size).toBe(SPACE_LOADS_PER_TURN + 5);
    for (const [i, rows] of (await Promise.all(singles)).entries()) expect(rows.get(`one:${i}`)).toEqual([`a/one:${i}`]);
    expect(store.reads.map((r) => r.spaces.length)).toEqual([SPACE_LOADS_PER_TURN + 5, SPACE_LOADS_PER_TURN, 1]);
    expect(store.reads[1]!.spaces[0]).toBe('one:0');
  });

  it("fails a failed turn's callers only: the turn queued behind it answers", async () => {
    const store = fakeStore();
    const turns = new SpaceLoadTurns(store.deps);
    const release = store.hold();
    const broken = turns.load('a', ['broken']);
    const sharing = turns.load('a', ['user:1']); // shares the failing turn
    const other = turns.load('b', ['user:1']); // another tenant: the next turn
    release();
    await expect(broken).rejects.toThrow('engine failed');
    await expect(sharing).rejects.toThrow('engine failed');
    expect((await other).get('user:1')).toEqual(['b/user:1']);
  });
});
