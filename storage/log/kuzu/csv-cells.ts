// Cells as the CSV lines `COPY ... FROM` reads, written once per row: the write journal's records hold
// these lines, and a copy of the journal into the engine writes them out as they are, so a journaled row
// is not also encoded as JSON (see docs/storage.md, "Bulk import: where the time goes").
//
// A text cell is its JSON encoding, quoted with doubled quotes (see kuzu-graph.ts): one line per row
// whatever the text holds, and an empty string distinct from NULL. A number is its decimal form, NULL an
// empty cell. So a line reads back without its columns' types: quoted is JSON, bare is a number.
import { checkCell, type Cell, type Scalar } from './table-rows.ts';

/** Text with no quote, backslash, control character or surrogate JSON-encodes to itself between quotes. */
const NEEDS_JSON_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** One cell as COPY reads it; throws on a number the engine would store as something else (checkCell). */
export function csvCell(value: Cell, type: Scalar): string {
  if (value === null) return '';
  if (type !== 'text' && type !== 'json') {
    checkCell(value, type);
    return String(value);
  }
  // The common text cell skips the encoder and the quote doubling.
  if (typeof value === 'string' && !NEEDS_JSON_ESCAPE.test(value)) return `"""${value}"""`;
  return `"${JSON.stringify(value).replace(/"/g, '""')}"`;
}

/**
 * The rows as CSV lines, each ended by a newline; a cell's type is its column's in `types` (text past
 * the end). Without `types` a string is written as text and a number as a number, which reads back the same.
 * Throws on a number the engine would store as something else (checkCell).
 */
export function csvLines(rows: Iterable<readonly Cell[]>, types?: readonly Scalar[]): string {
  const typeOf = (v: Cell | undefined, i: number): Scalar => (types ? (types[i] ?? 'text') : typeof v === 'number' ? 'float' : 'text');
  let out = '';
  for (const row of rows) out += `${row.map((v, i) => csvCell(v ?? null, typeOf(v, i))).join(',')}\n`;
  return out;
}

/** The cells of one line csvLines wrote (without its newline). */
export function parseCsvLine(line: string): Cell[] {
  const cells: Cell[] = [];
  let i = 0;
  for (;;) {
    if (line.charCodeAt(i) === 34) {
      let text = '';
      let from = ++i;
      for (;;) {
        const q = line.indexOf('"', i);
        if (q < 0) throw new Error('unterminated quoted cell in a journal record');
        if (line.charCodeAt(q + 1) === 34) {
          text += line.slice(from, q + 1);
          i = from = q + 2;
          continue;
        }
        text += line.slice(from, q);
        i = q + 1;
        break;
      }
      cells.push(JSON.parse(text) as string | number);
    } else {
      const comma = line.indexOf(',', i);
      const raw = line.slice(i, comma < 0 ? line.length : comma);
      cells.push(raw === '' ? null : Number(raw));
      i = comma < 0 ? line.length : comma;
    }
    if (i >= line.length) return cells;
    if (line.charCodeAt(i) !== 44) throw new Error('malformed cell in a journal record');
    i++;
  }
}
