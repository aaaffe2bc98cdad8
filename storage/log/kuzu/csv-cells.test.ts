// The CSV lines a journal record holds read back as the cells written, awkward text included, one line per
// row; a number the engine would change is refused while encoding, before anything is journaled.
import { describe, expect, it } from 'vitest';
import { csvCell, csvLines, parseCsvLine } from './csv-cells.ts';
import type { Cell, Scalar } from './table-rows.ts';

const TEXTS = ['', 'plain', 'line\none\r\ntwo', 'say "hi", \'bye\'', 'a\u0000b', 'tab\t', 'back\\slash', '\\n', 'é 漢字 🎉'];
const MORE = ['\ud800 lone', ',', '"', '""', 'null', ',null,', '{"k":[1,null]}', ' padded '];
const TYPES: Scalar[] = ['int', 'text', 'float', 'json', 'text', 'int'];

describe('csv cells', () => {
  it('read back as written, one line per row, in every column type', () => {
    const all = [...TEXTS, ...MORE];
    const rows: Cell[][] = all.map((t, i) => [
      i * 1_000_003 + 2 ** 52,
      t,
      i % 3 === 0 ? null : i / 7,
      i % 2 ? JSON.stringify({ t }) : null,
      all[(i + 5) % all.length] ?? null,
      i % 4 === 0 ? null : -i,
    ]);
    const text = csvLines(rows, TYPES);
    const lines = text.split('\n');
    expect(lines.pop()).toBe(''); // every line ends with a newline, and no cell holds one
    expect(lines).toHaveLength(rows.length);
    expect(lines.map(parseCsvLine)).toEqual(rows);
    // A text cell is its JSON encoding, quotes doubled, as Kuzu's COPY reads it (empty text is not NULL).
    expect(csvCell('', 'text')).toBe('""""""');
    expect(csvCell('say "hi"', 'text')).toBe('"""say \\""hi\\"""""');
    expect(csvCell(null, 'text')).toBe('');
    expect(csvLines([[1, 'x', null]])).toBe('1,"""x""",\n'); // untyped: a number bare, a string as text
  });

  it('refuses a number the engine would store as something else', () => {
    expect(() => csvLines([[2 ** 60, 'x']], ['int', 'text'])).toThrow(TypeError);
    expect(() => csvLines([[1.5]], ['int'])).toThrow(TypeError);
    expect(() => csvLines([[Number.NaN]], ['float'])).toThrow(TypeError);
    expect(csvLines([[1.5]], ['float'])).toBe('1.5\n');
  });
});
