import { describe, expect, it } from 'vitest';
import { extractLocal, splitSentences } from './local.ts';

const statements = (x: ReturnType<typeof extractLocal>) => x.blocks.map((b) => b.statement);
const link = (x: ReturnType<typeof extractLocal>, i = 0) => {
  const l = x.links[i]!;
  return { cause: x.blocks[l.cause]!.statement, effect: x.blocks[l.effect]!.statement, type: l.type, mechanism: l.mechanism };
};

describe('local extractor: claims and predictions', () => {
  it('splits sentences, keeping abbreviations inside', () => {
    expect(splitSentences('Dr. Smith arrived. The U.S. economy grew! Did it?')).toEqual([
      'Dr. Smith arrived.',
      'The U.S. economy grew!',
      'Did it?',
    ]);
  });

  it('tells predictions from claims', () => {
    const x = extractLocal(
      'Prices rose in May. Prices will fall next year. Analysts expect a recession. The firm plans to hire 50 people. It is likely to rain.',
    );
    expect(x.blocks.map((b) => b.kind)).toEqual(['claim', 'prediction', 'prediction', 'prediction', 'prediction']);
    expect(statements(x)[0]).toBe('Prices rose in May');
  });

  it('marks negated statements and draws no link the speaker denies', () => {
    const x = extractLocal('The drought did not cause the fire. Sales fell, but not because of the weather.');
    expect(x.blocks[0]).toMatchObject({ statement: 'The drought did not cause the fire', negated: true });
    expect(x.links).toEqual([]);
  });

  it('a negated prediction stays a prediction', () => {
    const x = extractLocal("Rates won't rise this year.");
    expect(x.blocks[0]).toMatchObject({ kind: 'prediction', negated: true });
  });
});

describe('local extractor: causal connectives', () => {
  it('"because": the following clause is the cause', () => {
    const x = extractLocal('The heatwave will push electricity prices up because demand for air conditioning spikes.');
    expect(link(x)).toEqual({
      cause: 'demand for air conditioning spikes',
      effect: 'The heatwave will push electricity prices up',
      type: 'CAUSES',
      mechanism: 'because demand for air conditioning spikes',
    });
    expect(x.blocks.find((b) => b.statement.startsWith('The heatwave'))!.kind).toBe('prediction');
  });

  it('"due to", "led to", ", so", "triggered", "prevents", "contributed to"', () => {
    expect(link(extractLocal('The flight was cancelled due to heavy fog.'))).toMatchObject({
      cause: 'heavy fog',
      effect: 'The flight was cancelled',
      type: 'CAUSES',
    });
    expect(link(extractLocal('The strike at the port led to empty shelves.'))).toMatchObject({
      cause: 'The strike at the port',
      effect: 'empty shelves',
      type: 'CAUSES',
    });
    expect(link(extractLocal('Rates rose sharply, so borrowing fell.'))).toMatchObject({
      cause: 'Rates rose sharply',
      effect: 'borrowing fell',
      type: 'CAUSES',
    });
    expect(link(extractLocal('The arrest triggered protests across the city.'))).toMatchObject({
      cause: 'The arrest',
      effect: 'protests across the city',
      type: 'TRIGGERS',
    });
    expect(link(extractLocal('Regular maintenance prevents costly breakdowns.'))).toMatchObject({
      cause: 'Regular maintenance',
      effect: 'costly breakdowns',
      type: 'PREVENTS',
    });
    expect(link(extractLocal('Cheap credit contributed to the housing bubble.'))).toMatchObject({
      cause: 'Cheap credit',
      effect: 'the housing bubble',
      type: 'CONTRIBUTING_FACTOR',
    });
  });

  it('an opening "Because ..., ..." puts the cause first', () => {
    expect(link(extractLocal('Because the Bank of England raised rates, mortgages got expensive.'))).toMatchObject({
      cause: 'the Bank of England raised rates',
      effect: 'mortgages got expensive',
      mechanism: 'Because the Bank of England raised rates',
    });
  });

  it('"As a result" links to the previous sentence', () => {
    const x = extractLocal('It rained all day. As a result, the match was cancelled.');
    expect(link(x)).toMatchObject({ cause: 'It rained all day', effect: 'the match was cancelled' });
  });

  it('chains two connectives in one sentence', () => {
    const x = extractLocal('Shops closed because of the storm, which led to a fall in sales.');
    expect(x.links).toHaveLength(2);
    const pairs = x.links.map((l) => [x.blocks[l.cause]!.statement, x.blocks[l.effect]!.statement]);
    expect(pairs).toContainEqual(['the storm', 'Shops closed']);
  });

  it('chat forms: "\'cause" is because; "love to", "look after", "even if" and an opening "So cool" argue nothing', () => {
    expect(link(extractLocal("I chose them 'cause they help families."))).toMatchObject({
      cause: 'they help families',
      effect: 'I chose them',
      type: 'CAUSES',
    });
    expect(extractLocal("I'd love to support those with similar issues.").links).toEqual([]);
    expect(extractLocal('I am able to better look after my family.').links).toEqual([]);
    expect(extractLocal("Self-care is important even if it's not always easy.").links).toEqual([]);
    expect(extractLocal('Love that painting! So cool you found such a helpful group.').links).toEqual([]);
  });

  it('"so" as an intensifier is not a connective', () => {
    expect(extractLocal('It was so much fun at the lake yesterday.').links).toEqual([]);
  });
});

describe('local extractor: entities', () => {
  it('finds multi-word names, acronyms and single names inside a sentence', () => {
    const x = extractLocal('Acme Power reported record load. Dana met the Bank of England team and NASA staff in New York on Monday.');
    expect(x.entities).toEqual(expect.arrayContaining(['Acme Power', 'Bank of England', 'NASA', 'New York']));
    expect(x.entities).not.toContain('Monday');
  });

  it('recognises names the space already knows, in any case', () => {
    const x = extractLocal('we talked about wheat prices and the acme power outage', new Set(['wheat', 'acme power']));
    expect(x.entities.map((e) => e.toLowerCase()).sort()).toEqual(['acme power', 'wheat']);
  });

  it('a speaker label opening a message is a name', () => {
    expect(extractLocal('Caroline: I went to a support group yesterday.').entities).toEqual(['Caroline']);
    expect(extractLocal('Yesterday: nothing happened.').entities).toEqual([]);
  });

  it('a name said twice is one entity', () => {
    expect(extractLocal('Maria Lopez called. Later Maria Lopez wrote.').entities).toEqual(['Maria Lopez']);
  });
});

describe('local extractor: other text', () => {
  it('non-English text passes through as claims without crashing', () => {
    const x = extractLocal('Der Preis steigt, weil die Nachfrage wächst. 東京は大きい。Цены растут.');
    expect(x.blocks.length).toBeGreaterThanOrEqual(3);
    expect(x.blocks.every((b) => b.statement.length > 0)).toBe(true);
  });

  it('is deterministic', () => {
    const text = 'Because Acme cut prices, rivals will follow. So margins shrink.';
    expect(extractLocal(text)).toEqual(extractLocal(text));
  });
});

describe('local extractor: hostile input', () => {
  it('long runs of punctuation or unpunctuated text are extracted, not backtracked over', () => {
    const commas = extractLocal(`Rates rose${', '.repeat(50_000)} so borrowing fell.`);
    expect(commas.blocks.length).toBeGreaterThanOrEqual(1);
    const dump = extractLocal('word because other '.repeat(6_000));
    expect(dump.blocks).toHaveLength(1);
    expect(dump.links).toEqual([]);
    expect(extractLocal('A. '.repeat(20_000)).blocks.length).toBeGreaterThanOrEqual(1);
  });
});
