import { describe, expect, it } from 'vitest';
import type { NodeVersion } from '../../types.ts';
import { ANSWER_TYPE_WEIGHT, answerCredit, answerType, holdsAnswer } from './answer-type.ts';

describe('the kind of answer a question asks for', () => {
  it('reads it from the question word', () => {
    expect(answerType('When did Caroline go to the LGBTQ support group?')).toBe('time');
    expect(answerType('  which year did Jon open his studio?')).toBe('time');
    expect(answerType('In what month did Maria adopt the dog?')).toBe('time');
    expect(answerType('How long ago was the trip?')).toBe('time');
    expect(answerType('How long has Nate been gaming?')).toBe('duration');
    expect(answerType('Where did Melanie camp?')).toBe('place');
    expect(answerType('What did Melanie paint?')).toBeNull();
    expect(answerType('Whenever it rains, what does Jon do?')).toBeNull();
  });

  it('finds times, lengths of time and places in a statement, not the words that look like them', () => {
    expect(holdsAnswer('time', 'I went to the group yesterday.')).toBe(true);
    expect(holdsAnswer('time', 'We moved there last summer.')).toBe(true);
    expect(holdsAnswer('time', 'The show opened on May 3 and ran in 2023.')).toBe(true);
    expect(holdsAnswer('time', 'It was back in March.')).toBe(true);
    expect(holdsAnswer('time', 'I may go, if the kids want to.')).toBe(false);
    expect(holdsAnswer('time', 'The group means so much to me.')).toBe(false);
    expect(holdsAnswer('duration', 'I have been painting for three years.')).toBe(true);
    expect(holdsAnswer('duration', 'Only a couple of months so far.')).toBe(true);
    expect(holdsAnswer('duration', 'I love painting.')).toBe(false);
    expect(holdsAnswer('place', 'We camped at the lake near Tahoe.')).toBe(true);
    expect(holdsAnswer('place', 'We went camping with the kids.')).toBe(false);
  });

  it('credits each kind a version holds, kept per version and kind, whatever order they are asked in', () => {
    const turn = (statement: string) => ({ kind: 'turn', payload: '{}', statement }) as unknown as NodeVersion;
    const place = turn('We camped at the lake near Tahoe.');
    const time = turn('I went to the group yesterday.');
    const asked: [NodeVersion, 'time' | 'duration' | 'place'][] = [
      [place, 'time'],
      [place, 'place'],
      [time, 'place'],
      [time, 'time'],
      [place, 'duration'],
      [time, 'duration'],
      [place, 'place'],
      [place, 'time'],
      [time, 'place'],
    ];
    // A time also answers "how long" (holdsAnswer).
    expect(asked.map(([n, type]) => answerCredit(type, n))).toEqual([0, 1, 0, 1, 0, 1, 1, 0, 0].map((on) => on * ANSWER_TYPE_WEIGHT));
    expect(ANSWER_TYPE_WEIGHT).toBeGreaterThan(0);
    expect(answerCredit(null, time)).toBe(0);
  });
});
