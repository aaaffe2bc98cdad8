// Entity-aware retrieval on small hand-made ledgers: a question naming an entity reaches the block that
// MENTIONS it even when the block's words do not name it, a rare entity counts more than a common one,
// and a mention learned after the read's as_of is not followed.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempLedger, type TempLedger } from '../../../test/helpers/temp-ledger.ts';
import type { Ledger } from '../../log/ledger.ts';
import { entityList, mentioningBlocks, namedEntities } from './entity-reach.ts';
import { LocalEmbedder } from '../embed/local-embedder.ts';
import { search } from '../search.ts';
import { SearchIndex } from '../search-index.ts';

let temp: TempLedger;
let ledger: Ledger;
let index: SearchIndex;
const at = (iso: string) => Date.parse(iso) * 1000;
const T1 = at('2023-07-01T00:00:00Z');
const T2 = at('2023-07-08T00:00:00Z');

beforeAll(async () => {
  temp = await tempLedger('entity-reach');
  ledger = temp.ledger;
  index = await SearchIndex.open(join(temp.dir, 'search'), new LocalEmbedder(), ledger, null);
  // Blocks linked to the entities they name; the trip's names no town, its MENTIONS edge does. The
  // link to the town is learned a week after the episodes (a later pass over the same messages).
  // Resident, as a read without a space makes it: the test reads the tenant's view.
  await ledger.load('trip');
  await ledger.write('trip', {
    space: 's',
    nodes: [
      // The hike matches the words of the question below better; only the trip is linked to the town.
      { id: 'hike', kind: 'claim', statement: 'Joanna: Lovely scenery and old buildings there, so many old buildings.' },
      { id: 'trip', kind: 'claim', statement: 'Joanna: Lovely scenery and old buildings there.' },
      { id: 'movie', kind: 'claim', statement: 'Joanna: I watched a movie last night.' },
      { id: 'joanna', kind: 'entity', statement: 'Joanna' },
    ],
    edges: ['trip', 'movie', 'hike'].map((id) => ({ source_id: id, target_id: 'joanna', edge_type: 'MENTIONS' })),
    backfill: { declared_captured_at: T1, reason: 'test' },
  });
  await ledger.load('trip');
  await ledger.write('trip', {
    space: 's',
    nodes: [{ id: 'woodhaven', kind: 'entity', statement: 'Woodhaven' }],
    edges: [{ source_id: 'trip', target_id: 'woodhaven', edge_type: 'MENTIONS' }],
    backfill: { declared_captured_at: T2, reason: 'test' },
  });
  await index.caughtUp();
});

afterAll(async () => {
  await index.close();
  await temp.remove();
});

const ask = async (query: string, asOf: number) => {
  const r = await search(index, ledger.view('trip'), { query, asOf, now: ledger.now(), limit: 10, depth: 0, families: [] });
  return r.results.map((x) => x.node.id);
};

describe('entities a query names', () => {
  it('matches names on word boundaries, in any case, several words long, and only those known at as_of', () => {
    const view = ledger.view('trip');
    expect(namedEntities(view, "What did JOANNA see in Woodhaven's library?", { asOf: T2 }).sort()).toEqual(['joanna', 'woodhaven']);
    expect(namedEntities(view, 'What did Joanna see in Woodhaven?', { asOf: T1 })).toEqual(['joanna']);
    expect(namedEntities(view, 'Joannas and woodhavens', { asOf: T2 })).toEqual([]);
    expect(namedEntities(view, 'What did Joanna see?', { asOf: T2, space: 'other' })).toEqual([]);
  });

  it('scores a block mentioning a rare entity above blocks mentioning only a common one', () => {
    const scores = mentioningBlocks(ledger.view('trip'), ['joanna', 'woodhaven'], { asOf: T2 });
    expect([...scores.keys()].sort()).toEqual(['hike', 'movie', 'trip']);
    expect(scores.get('trip')!).toBeGreaterThan(scores.get('movie')!);
    expect(scores.get('movie')).toBe(scores.get('hike'));
  });
});

describe('a block reached through an entity it MENTIONS', () => {
  it('ranks the block linked to the named town above one matching the words better, once the link is known and not before', async () => {
    const query = 'Which old buildings were there in Woodhaven?';
    const ranked = await ask(query, T2);
    expect(ranked).toContain('hike');
    expect(ranked.indexOf('trip')).toBeGreaterThanOrEqual(0);
    expect(ranked.indexOf('trip')).toBeLessThan(ranked.indexOf('hike'));
    // Before the link is known the words alone decide, and they put the hike ahead.
    const before = await ask(query, T1);
    expect(before.indexOf('hike')).toBeGreaterThanOrEqual(0);
    expect(before.indexOf('hike')).toBeLessThan(before.indexOf('trip'));
  });

  it('lists nothing through a mention learned after as_of', () => {
    const view = ledger.view('trip');
    const list = (asOf: number) => entityList(view, 'Which old buildings were there in Woodhaven?', [], () => true, { asOf }, 10);
    expect(list(T2).map((h) => h.id)).toEqual(['trip']);
    expect(list(T1)).toEqual([]);
  });
});
