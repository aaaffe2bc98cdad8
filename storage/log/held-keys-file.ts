// The filters of held ids saved by a clean close and taken back by the next open (held-keys.ts), beside
// the store under its latest row's mark (saved-beside-store.ts). Rows deleted since (a tenant's deletion,
// resumed on open) leave a filter holding too many keys, which costs lookups, never a wrong answer. The
// header gives per tenant its slices' room, count and words; the words follow in the header's order.
import type { SavedFilter } from './held-keys.ts';
import { saveBesideStore, takeBesideStore, type StoreMark } from './saved-beside-store.ts';

export const HELD_KEYS_FILE = 'held-keys.bin';
const MAGIC = 'HKF2';

type Header = { tenant: string; slices: { room: number; count: number; words: number }[] }[];

/** Writes the filters beside the store, replacing any saved before. */
export function saveHeldKeys(path: string, mark: StoreMark, filters: readonly SavedFilter[]): void {
  const header: Header = filters.map((f) => ({
    tenant: f.tenant,
    slices: f.slices.map((s) => ({ room: s.room, count: s.count, words: s.bits.length })),
  }));
  saveBesideStore(
    path,
    MAGIC,
    mark,
    header,
    filters.flatMap((f) => f.slices.map((s) => s.bits)),
  );
}

/** The saved filters if the file was saved when the store's latest row was `mark`, else null; the file is removed either way. */
export async function takeHeldKeys(path: string, mark: StoreMark): Promise<SavedFilter[] | null> {
  const saved = await takeBesideStore<Header>(path, MAGIC, mark);
  if (!saved || !Array.isArray(saved.body)) return null;
  const { body, words } = saved;
  if (body.reduce((n, f) => n + f.slices.reduce((m, s) => m + s.words, 0), 0) !== words.length) return null;
  let at = 0;
  return body.map((f) => ({
    tenant: f.tenant,
    slices: f.slices.map((s) => {
      const bits = words.subarray(at, at + s.words);
      at += s.words;
      return { room: s.room, count: s.count, bits };
    }),
  }));
}
