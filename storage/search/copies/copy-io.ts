// Where a copy file's bytes are written and searched: on the event loop (LocalCopyIO, a CopyStore called
// in place) or on a thread of their own (copy-thread.ts). copy-files.ts decides what each file holds and
// asks one of them; both answer in the order they were asked.
import type { Hit } from '../index-row.ts';
import { CopyStore, type FileSearch } from './copy-store.ts';
import type { SpaceRow } from './packed-format.ts';
import type { MirrorRow } from './vector-mirror.ts';

/** What the bytes' side tells copy-files.ts; a local one says it before its call returns. */
export interface CopyEvents {
  /** The scope's file was written and now takes `bytes`. */
  sized(key: string, bytes: number): void;
  /** The scope's file could not be written and is gone. */
  failed(key: string, error: string): void;
  /** The files can no longer be used at all (their thread stopped): every one is gone. */
  lost(error: string): void;
}

export interface CopyIO {
  /** CopyStore.append: rows added at the file's end, or with `create` the file written anew with them. */
  append(key: string, rows: readonly SpaceRow[], tokens: readonly (readonly string[])[], create: boolean): void;
  remove(key: string): void;
  /** The lists asked of a file of `rows` rows; null when there is none such (see CopyStore.search). */
  search(key: string, rows: number, asked: readonly FileSearch[]): Promise<Hit[][] | null>;
  /** Searches that read a file and merges written, as last known. */
  readonly counts: { reads: number; merges: number };
  close(): void;
}

export class LocalCopyIO implements CopyIO {
  readonly #store: CopyStore;
  readonly #events: CopyEvents;

  constructor(dir: string, events: CopyEvents) {
    this.#store = new CopyStore(dir);
    this.#events = events;
  }

  get counts(): { reads: number; merges: number } {
    return this.#store.counts;
  }

  append(key: string, rows: readonly SpaceRow[], tokens: readonly (readonly string[])[], create: boolean): void {
    let bytes: number;
    try {
      bytes = this.#store.append(key, rows, tokens, create);
    } catch (error) {
      return this.#events.failed(key, String(error));
    }
    this.#events.sized(key, bytes);
  }

  remove(key: string): void {
    this.#store.remove(key);
  }

  search(key: string, rows: number, asked: readonly FileSearch[]): Promise<Hit[][] | null> {
    return Promise.resolve(this.#store.search(key, rows, asked));
  }

  /** Rows of each segment of the scope's file (tests). */
  segmentRows(key: string): number[] | undefined {
    return this.#store.segmentRows(key);
  }

  /** The rows of the scope's file as read back from it (tests). */
  decoded(key: string): MirrorRow[] | null {
    return this.#store.decoded(key);
  }

  close(): void {
    this.#store.close();
  }
}
