// Ranking rules on small hand-made ledgers: a reply found through the words of the turn it answers (its
// linked blocks' words are indexed with it, but only those readable with it), a message found through the
// messages sent with it, a turn that asks ranked below the reply that answers it, a question naming a
// date preferring what was said then, and a question asking when preferring the turn that says when.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../../log/ledger.ts';
import { endsAsking } from './asking.ts';
import { contextText } from './context.ts';
import { LocalEmbedder } from '../embed/local-embedder.ts';
import { search } from '../search.ts';
import { indexText, SearchIndex } from '../search-index.ts';

let dir: string;
let ledger: Ledger;
let index: SearchIndex;
const at = (iso: string) => Date.parse(iso) * 1000;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ranking-rules-'));
  ledger = await Ledger.open(join(dir, 'data'));
  index = await SearchIndex.open(join(dir, 'search'), new LocalEmbedder(), ledger, null);
});

afterAll(async () => {
  await index.close();
  await ledger.close();
  rmSync(dir, { recursive: true, force: true });
});

const ask = async (tenant: string, query: string) => {
  await index.caughtUp();
  const now = ledger.now();
  const r = await search(index, ledger.view(tenant), { query, asOf: now, now, limit: 10, depth: 0, families: [] });
  return r.results.map((x) => x.node.id);
};

describe('a reply is found through the turn it answers', () => {
  it('ranks a short reply naming nothing above an unrelated turn of the same speaker', async () => {
    const turns = [
      ['q', 'Caroline: Did you enjoy the pottery workshop with the kids last weekend?'],
      ['r', 'Melanie: Loved it, honestly the best afternoon in ages.'],
      ['x', 'Caroline: Glad to hear it!'],
      ['g', 'Melanie: I went to the gym this morning and then read a book.'],
      ['h', 'Caroline: Nice, which one?'],
    ];
    // Resident, as a read without a space makes it: the test reads the tenant's view.
    await ledger.load('chat');
    await ledger.write('chat', {
      space: 's',
      nodes: turns.map(([id, statement]) => ({ id, kind: 'turn', statement })),
      edges: turns.slice(1).map(([id], i) => ({ source_id: turns[i]![0]!, target_id: id!, edge_type: 'CONCURRENT_SIGNAL' })),
    });
    const ranked = await ask('chat', 'What did Melanie think of the pottery workshop?');
    expect(ranked.slice(0, 2)).toContain('r');
    expect(ranked.indexOf('r')).toBeLessThan(ranked.indexOf('g') < 0 ? Infinity : ranked.indexOf('g'));
  });

  it('takes only linked words readable with the block: a later reply adds nothing to an earlier turn', async () => {
    await ledger.load('later');
    await ledger.write('later', { space: 's', nodes: [{ id: 'a', kind: 'turn', statement: 'Anna: How was the regatta?' }], edges: [] });
    await ledger.load('later');
    await ledger.write('later', {
      space: 's',
      nodes: [{ id: 'b', kind: 'turn', statement: 'Ben: Windy, we capsized twice.' }],
      edges: [{ source_id: 'a', target_id: 'b', edge_type: 'CONCURRENT_SIGNAL' }],
    });
    const view = ledger.view('later');
    const [a] = view.versionsOf('a');
    const [b] = view.versionsOf('b');
    expect(contextText(view, a!)).toBe('');
    expect(contextText(view, b!)).toContain('regatta');
    // In full text, the earlier turn is not found by the later reply's words; the reply is found by the turn's.
    await index.caughtUp();
    const text = async (word: string) =>
      (await index.candidates('later', [word], word, { asOf: ledger.now() }, 10)).text.map((h) => h.id).sort();
    expect(await text('capsized')).toEqual(['b']);
    expect(await text('regatta')).toEqual(['a', 'b']);
  });
});

describe('a message is read with the messages of its exchange', () => {
  const episode = (id: string, content: string) => ({
    id,
    kind: 'episode',
    statement: `chat: ${content.slice(0, 12)}…`,
    payload: { content },
  });

  it('finds a reply naming nothing through the message before it in the same write, never one written later', async () => {
    await ledger.load('exchange');
    await ledger.write('exchange', {
      space: 's',
      nodes: [
        episode('ask', 'Nate: I made coconut milk ice cream yesterday, have you ever tried it?'),
        episode('reply', 'Joanna: Super good! Rich and creamy, my new favourite snack.'),
        episode('f1', 'Nate: My turtles are sleeping in the sun right now.'),
        episode('f2', 'Nate: They are so calm, it helps me relax after work.'),
        episode('other', 'Joanna: The gym was packed this morning, so I went for a run instead.'),
      ],
      edges: [],
    });
    await ledger.load('exchange');
    await ledger.write('exchange', {
      space: 's',
      nodes: [episode('later', 'Nate: Rowing on the lake at dawn is my new hobby.')],
      edges: [],
    });
    const view = ledger.view('exchange');
    const ctx = (id: string) => contextText(view, view.versionsOf(id)[0]!);
    // An episode is indexed by its message, not the name extraction gives it.
    expect(indexText(view.versionsOf('reply')[0]!)).toContain('favourite snack');
    expect(ctx('reply')).toContain('coconut milk ice cream');
    // The previous message of another write is not part of the exchange.
    expect(ctx('later')).toBe('');
    const ranked = await ask('exchange', 'What did Joanna think of the coconut milk ice cream?');
    expect(ranked.indexOf('reply')).toBeGreaterThanOrEqual(0);
    expect(ranked.indexOf('reply')).toBeLessThan(ranked.indexOf('other') < 0 ? Infinity : ranked.indexOf('other'));
  });
});

describe('a turn that asks is not the answer', () => {
  it('ranks the reply above the question it answers, which shares the asked words', async () => {
    const turns = [
      ['ask', 'Joanna: That sounds fun! What inspired you to start making gaming videos?'],
      ['answer', 'Nate: I am a big fan of them and thought it would be a fun idea to try it myself.'],
      ['later', 'Joanna: Way to go, Nate! You will do great.'],
    ];
    await ledger.load('asking');
    await ledger.write('asking', {
      space: 's',
      nodes: turns.map(([id, statement]) => ({ id, kind: 'turn', statement })),
      edges: turns.slice(1).map(([id], i) => ({ source_id: turns[i]![0]!, target_id: id!, edge_type: 'CONCURRENT_SIGNAL' })),
    });
    const ranked = await ask('asking', 'What inspired Nate to start making gaming videos?');
    expect(ranked.indexOf('answer')).toBeGreaterThanOrEqual(0);
    expect(ranked.indexOf('answer')).toBeLessThan(ranked.indexOf('ask'));
  });

  it('recognises a text ending in a question, quotes and brackets aside', () => {
    expect(endsAsking('Did you make it?')).toBe(true);
    expect(endsAsking('She asked "why not?" ')).toBe(true);
    expect(endsAsking('Why? Because it rained.')).toBe(false);
  });
});

describe('a question naming a date', () => {
  it('prefers the turn asserted that day over the same words said another time', async () => {
    await ledger.load('dated');
    await ledger.write('dated', {
      space: 's',
      nodes: [
        {
          id: 'june',
          kind: 'turn',
          statement: 'Maria: I started a new yoga class after a long week at the shelter, then cooked dinner for my mom.',
          asserted_at: at('2023-06-03T10:00:00Z'),
        },
        { id: 'sept', kind: 'turn', statement: 'Maria: I started a new yoga class.', asserted_at: at('2023-09-10T10:00:00Z') },
      ],
      edges: [],
    });
    expect((await ask('dated', 'What yoga class did Maria start?'))[0]).toBe('sept');
    expect((await ask('dated', 'What yoga class did Maria start on 3 June, 2023?'))[0]).toBe('june');
    expect((await ask('dated', 'What yoga class did Maria start in September 2023?'))[0]).toBe('sept');
  });
});

describe('a question asking when', () => {
  it('prefers the turn that says when over one that only repeats the asked words', async () => {
    await ledger.load('when');
    await ledger.write('when', {
      space: 's',
      nodes: [
        { id: 'dated', kind: 'turn', statement: 'Caroline: I went to the LGBTQ support group yesterday, it was powerful.' },
        { id: 'undated', kind: 'turn', statement: 'Caroline: The LGBTQ support group means a lot, it was powerful.' },
      ],
      edges: [],
    });
    expect((await ask('when', 'When did Caroline go to the LGBTQ support group?'))[0]).toBe('dated');
    expect((await ask('when', 'What did Caroline say about the LGBTQ support group?'))[0]).toBe('undated');
  });
});

describe('a read at or after the latest known_at hides nothing', () => {
  it('counts matches learned after as_of only when there are some (the read as of the latest skips the count)', async () => {
    const t1 = at('2023-05-01T00:00:00Z');
    const t2 = at('2023-05-08T00:00:00Z');
    await ledger.load('masked');
    for (const [id, statement, known] of [
      ['keeper', 'The lighthouse keeper retired.', t1],
      ['lamp', 'The lighthouse lamp was replaced.', t2],
    ] as const)
      await ledger.write('masked', {
        space: 's',
        nodes: [{ id, kind: 'claim', statement }],
        edges: [],
        backfill: { declared_captured_at: known, reason: 'test' },
      });
    await index.caughtUp();
    // `now` is the server's clock (today), later than every as_of here, as for a client's "now" read.
    const read = (asOf: number) =>
      search(index, ledger.view('masked'), { query: 'lighthouse', asOf, now: ledger.now(), limit: 10, depth: 0, families: [] });
    for (const asOf of [t2, t2 + 5]) {
      const r = await read(asOf);
      expect(r.results.map((x) => x.node.id).sort()).toEqual(['keeper', 'lamp']);
      expect(r.masked.node).toBe(0);
    }
    const before = await read(t2 - 1);
    expect(before.results.map((x) => x.node.id)).toEqual(['keeper']);
    expect(before.masked.node).toBe(1);
  });
});
