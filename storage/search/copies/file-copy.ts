// A space's copy searched in its file (copy-files.ts, packed-search.ts) rather than read into memory: a
// search of a space whose copy is not in memory reads its file from the page cache (~130 KB for a space
// of 150 rows) and scores it where it lies (on the event loop, or on the copy files' thread), and nothing
// of it outlives the search.
import type { Hit, RowFilter } from '../index-row.ts';
import type { CopyFiles } from './copy-files.ts';
import type { FileSearch } from './copy-store.ts';
import type { ScopeCopy } from './scope-copy.ts';

export class FileCopy implements ScopeCopy {
  readonly #files: CopyFiles;
  readonly #key: string;

  constructor(files: CopyFiles, key: string) {
    this.#files = files;
    this.#key = key;
  }

  readonly hasVectors = true;

  /** The file's, read as it is now (a search may have added rows to it since this copy was handed out). */
  get maxSeq(): number {
    return this.#files.maxSeq(this.#key) ?? Number.NEGATIVE_INFINITY;
  }

  get size(): number {
    return this.#files.rows(this.#key) ?? 0;
  }

  /** Whether the file is still complete: one removed (its space changed, or it passed a bound) is gone. */
  get present(): boolean {
    return this.#files.has(this.#key);
  }

  fullText(tokens: readonly string[], f: RowFilter, limit: number): Promise<Hit[] | null> {
    return this.#search({ list: 'text', tokens, filter: f, limit });
  }

  nearest(query: Float32Array, f: RowFilter, limit: number, column: 'vector' | 'wvec'): Promise<Hit[] | null> {
    return this.#search({ list: 'near', query, filter: f, limit, column });
  }

  /** Several lists of the file at once (one read, and one message to the copy files' thread); null as for one. */
  lists(asked: readonly FileSearch[]): Promise<Hit[][] | null> {
    return this.#files.search(this.#key, asked);
  }

  /** One list of the file; null when it is gone or could not be searched (then removed: the copy is read from the table). */
  async #search(asked: FileSearch): Promise<Hit[] | null> {
    return (await this.#files.search(this.#key, [asked]))?.[0] ?? null;
  }
}
