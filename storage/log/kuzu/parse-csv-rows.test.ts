// The reader of Kuzu's COPY TO files against the encoding COPY FROM reads (text cells JSON-encoded, then
// CSV-quoted): the one-slice path for cells without a quote and the general path agree on every cell, and
// a decoded text keeps nothing of the answer it came from.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { parseCsvRows, str } from './tables.ts';

const csvText = (text: string): string => `"${JSON.stringify(text).replace(/"/g, '""')}"`;

let seed = 5;
const rand = (): number => {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
  return seed / 4294967296;
};
const PIECES = ['a', 'word', ' ', ',', '"', '""', '\\', '\n', '\r\n', 'é', '🎉', "'", '"""', ',"', '",'];
const randomText = (): string => Array.from({ length: Math.floor(rand() * 8) }, () => PIECES[Math.floor(rand() * PIECES.length)]).join('');

describe('parseCsvRows', () => {
  it('reads every text cell back as the JSON string written, quotes or not', () => {
    const columns = [
      { name: 'a', type: 'text' as const, get: () => null },
      { name: 'n', type: 'int' as const, get: () => null },
      { name: 'b', type: 'text' as const, get: () => null },
      { name: 'c', type: 'text' as const, get: () => null },
    ];
    // As Kuzu writes INT64 cells; past 2^53 (and in any form but plain digits) they are read by Number.
    const INTS = [
      '0',
      '7',
      '-12',
      '-0',
      '007',
      '1763812345678901',
      '-1763812345678901',
      '9007199254740991',
      '9007199254740993',
      '9999999999999999',
      '123456789012345678',
      '-',
    ];
    const rows = Array.from({ length: 2000 }, (_, i) => ({
      a: randomText(),
      n: i % 3 === 0 ? null : i % 2 === 0 ? String(i) : INTS[(i >> 1) % INTS.length]!,
      b: randomText(),
      c: rand() < 0.2 ? null : randomText(),
    }));
    const cell = (t: string | null): string => (t === null ? '' : csvText(t));
    const file = rows.map((r) => [cell(r.a), r.n ?? '', cell(r.b), cell(r.c)].join(',')).join('\n');
    const back = parseCsvRows(file, columns);
    // Decoded as read, from one record object refilled for every line.
    expect(parseCsvRows(file, columns, (r) => ({ ...r }))).toEqual(back);
    expect(back).toEqual(
      rows.map((r) => ({
        a: JSON.stringify(r.a),
        n: r.n === null ? null : Number(r.n),
        b: JSON.stringify(r.b),
        c: r.c === null ? null : JSON.stringify(r.c),
      })),
    );
  });
});

describe('text decoded from a whole answer', () => {
  it('keeps none of the answer: a few rows kept do not hold the file they were read from', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const columns = [{ name: 'statement', type: 'text' as const, get: () => null }];
    const settle = async (): Promise<number> => {
      await new Promise((r) => setTimeout(r, 0));
      gc();
      return process.memoryUsage().heapUsed;
    };
    const before = await settle();
    // ~40 MB of answer, of which one row in a hundred is kept (~0.2 MB of text).
    let file: string | null = Array.from({ length: 200_000 }, (_, i) => csvText(`statement ${i} `.padEnd(200, 'x'))).join('\n');
    const kept = parseCsvRows(file, columns, (r) => str(r, 'statement')).filter((_, i) => i % 100 === 0);
    file = null;
    const grown = (await settle()) - before;
    expect(kept).toHaveLength(2_000);
    expect(kept[7]).toBe('statement 700 '.padEnd(200, 'x'));
    // A slice of the file would keep all ~40 MB of it.
    expect(grown).toBeLessThan(8 * 1024 * 1024);
  });
});
