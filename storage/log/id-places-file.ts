// The tables of ids' places saved by a clean close and taken back by the next open (id-places.ts), beside
// the store under its latest row's mark (saved-beside-store.ts): without them, the first tenant whose reads
// ask the store again after a restart scans its pairs again (2.4 s at 300k rows under load). The header
// gives per tenant its count, slots and spaces by code; then each table's h1, h2 and code arrays.
import type { SavedPlaces } from './id-places.ts';
import { saveBesideStore, takeBesideStore, type StoreMark } from './saved-beside-store.ts';

export const ID_PLACES_FILE = 'id-places.bin';
const MAGIC = 'IPF1';

type Header = { tenant: string; count: number; slots: number; spaces: string[] }[];

/** Writes the tables beside the store, replacing any saved before. */
export function saveIdPlaces(path: string, mark: StoreMark, tables: readonly SavedPlaces[]): void {
  const header: Header = tables.map((t) => ({ tenant: t.tenant, count: t.count, slots: t.code.length, spaces: t.spaces }));
  saveBesideStore(
    path,
    MAGIC,
    mark,
    header,
    tables.flatMap((t) => [t.h1, t.h2, t.code]),
  );
}

/** The saved tables if the file was saved when the store's latest row was `mark`, else null; the file is removed either way. */
export async function takeIdPlaces(path: string, mark: StoreMark): Promise<SavedPlaces[] | null> {
  const saved = await takeBesideStore<Header>(path, MAGIC, mark);
  if (!saved || !Array.isArray(saved.body)) return null;
  const { body, words } = saved;
  if (body.reduce((n, t) => n + 3 * t.slots, 0) !== words.length) return null;
  let at = 0;
  // Copies when there are several, so that a table forgotten under the budget frees its memory whatever the
  // others keep; one table keeps the file's words.
  const next = (n: number): Uint32Array => (body.length > 1 ? words.slice(at, (at += n)) : words.subarray(at, (at += n)));
  return body.map((t) => {
    const h1 = next(t.slots);
    const h2 = next(t.slots);
    const code = next(t.slots);
    return { tenant: t.tenant, count: t.count, spaces: t.spaces, h1, h2, code: new Int32Array(code.buffer, code.byteOffset, code.length) };
  });
}
