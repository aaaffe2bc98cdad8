// The reader of Kuzu's COPY TO files against the encoding COPY FROM reads (text cells JSON-encoded, then
// CSV-quoted): the one-slice path for cells without a quote and the general path agree on every cell.
import { describe, expect, it } from 'vitest';
import { parseCsvRows } from './kuzu-graph.ts';

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
    const rows = Array.from({ length: 2000 }, (_, i) => ({
      a: randomText(),
      n: i % 3 === 0 ? null : i,
      b: randomText(),
      c: rand() < 0.2 ? null : randomText(),
    }));
    const cell = (t: string | null): string => (t === null ? '' : csvText(t));
    const file = rows.map((r) => [cell(r.a), r.n === null ? '' : String(r.n), cell(r.b), cell(r.c)].join(',')).join('\n');
    const back = parseCsvRows(file, columns);
    expect(back).toEqual(
      rows.map((r) => ({ a: JSON.stringify(r.a), n: r.n, b: JSON.stringify(r.b), c: r.c === null ? null : JSON.stringify(r.c) })),
    );
  });
});
