import { describe, expect, it } from 'vitest';
import { searchMemory } from '../../tools/search-memory.ts';
import { shortInstant, summarize } from './render.ts';

const node = (id: string, kind: string, space: string, statement: string) => ({
  id,
  kind,
  space,
  statement,
  category: null,
  asserted_at: '2023-05-08T13:56:00.000000Z',
  valid: { from: '2023-05-08T13:56:00.000000Z', to: null },
  superseded_by: [],
});

describe('search text a model reads', () => {
  it('says a shared kind and space once, whole minutes without seconds, scores to two decimals', () => {
    const body = {
      results: [
        { match: 'direct', score: 1.23456, node: node('t1', 'claim', 'conv-1', 'Caroline: I went to a support group') },
        { match: 'direct', score: 0.5, node: node('t2', 'claim', 'conv-1', 'Melanie: I painted a sunrise') },
      ],
      certificate: { as_of: '2023-06-01T00:00:00.000000Z' },
    };
    const text = summarize(searchMemory, body);
    const [head, first, second] = text.split('\n');
    expect(head).toContain('2 results (2 direct, 0 by expansion), every one a claim in space conv-1');
    expect(first).toBe('1. [t1] · "Caroline: I went to a support group" · asserted 2023-05-08T13:56Z · score 1.23');
    expect(second).toBe('2. [t2] · "Melanie: I painted a sunrise" · asserted 2023-05-08T13:56Z · score 0.50');
  });

  it('keeps each kind on its line when the kinds differ', () => {
    const body = {
      results: [
        { match: 'direct', score: 1, node: node('t1', 'claim', 's', 'Rain fell') },
        { match: 'direct', score: 1, node: node('p1', 'prediction', 's', 'Rain will fall') },
      ],
      certificate: { as_of: '2023-06-01T00:00:00.000000Z' },
    };
    const text = summarize(searchMemory, body);
    expect(text).not.toContain('every one a');
    expect(text).toContain('[t1] claim ·');
    expect(text).toContain('[p1] prediction ·');
  });

  it('shortens only what stays exact', () => {
    expect(shortInstant('2024-01-01T00:00:00.000000Z')).toBe('2024-01-01');
    expect(shortInstant('2024-01-01T10:30:00.000000Z')).toBe('2024-01-01T10:30Z');
    expect(shortInstant('2024-01-01T10:30:05.000000Z')).toBe('2024-01-01T10:30:05Z');
    expect(shortInstant('2024-01-01T10:30:00.250000Z')).toBe('2024-01-01T10:30:00.25Z');
  });
});
