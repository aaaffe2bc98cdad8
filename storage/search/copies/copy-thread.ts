// The copy files' bytes written, merged, read and searched on a thread of their own. Under the mixed load
// at 2,000 users × 150 rows, searching copy files (reading one and scoring it) took 14% of the event loop's
// time and appending to them (encoding, merging) 6.5%, while one of the two cores sat idle a third of the
// time: the event loop, which also answers every list, get and write, was what requests queued for.
// Off by default (SVC_SEARCH_COPY_THREADS=1 turns it on): on two cores shared with the load's client it
// answered more, with lower medians, but longer tails (docs/search-in-space.md, the copy files' thread).
// Messages to a worker keep their order, and the thread does each file's work in that order (searches
// ahead of other files' writes, keyed-queue.ts), so a search asked after an append finds the append's rows.
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../../start-worker.ts';
import type { Hit } from '../index-row.ts';
import type { CopyEvents, CopyIO } from './copy-io.ts';
import type { FileSearch } from './copy-store.ts';
import type { SpaceRow } from './packed-format.ts';

export type CopyRequest =
  | { t: 'append'; key: string; rows: readonly SpaceRow[]; tokens: readonly (readonly string[])[]; create: boolean }
  | { t: 'remove'; key: string }
  | { t: 'search'; id: number; key: string; rows: number; asked: readonly FileSearch[] }
  | { t: 'close' };

export type CopyReply = { reads: number; merges: number } & (
  | { t: 'sized'; key: string; bytes: number }
  | { t: 'failed'; key: string; error: string }
  | { t: 'found'; id: number; hits: Hit[][] | null }
);

export class CopyThread implements CopyIO {
  readonly #worker: Worker;
  readonly #events: CopyEvents;
  readonly #waiting = new Map<number, (hits: Hit[][] | null) => void>();
  #next = 0;
  #lost = false;
  counts = { reads: 0, merges: 0 };

  constructor(dir: string, events: CopyEvents) {
    this.#events = events;
    this.#worker = startWorker(import.meta.url, 'copy-thread-worker', { dir });
    // Idle, the thread must not keep the process alive; a search in flight refs it.
    this.#worker.unref();
    this.#worker.on('message', (reply: CopyReply) => this.#receive(reply));
    this.#worker.on('error', (error) => this.#lose(`the copy files' thread failed: ${error.message}`));
    this.#worker.on('exit', (code) => this.#lose(`the copy files' thread exited (code ${code})`));
  }

  append(key: string, rows: readonly SpaceRow[], tokens: readonly (readonly string[])[], create: boolean): void {
    this.#post({ t: 'append', key, rows, tokens, create });
  }

  remove(key: string): void {
    this.#post({ t: 'remove', key });
  }

  search(key: string, rows: number, asked: readonly FileSearch[]): Promise<Hit[][] | null> {
    if (this.#lost) return Promise.resolve(null);
    const id = ++this.#next;
    if (this.#waiting.size === 0) this.#worker.ref();
    const found = new Promise<Hit[][] | null>((resolve) => this.#waiting.set(id, resolve));
    this.#post({ t: 'search', id, key, rows, asked });
    return found;
  }

  /** Closes the files (the next start removes them) and ends the thread once it has. */
  close(): void {
    this.#post({ t: 'close' });
    this.#lost = true;
    this.#answerAll();
  }

  #post(request: CopyRequest): void {
    if (this.#lost) return;
    try {
      this.#worker.postMessage(request);
    } catch (error) {
      // A row that cannot be cloned would be a bug; the files are given up rather than left short of it.
      this.#lose(`a copy file could not be handed to its thread: ${String(error)}`);
    }
  }

  #receive(reply: CopyReply): void {
    this.counts = { reads: reply.reads, merges: reply.merges };
    if (reply.t === 'sized') this.#events.sized(reply.key, reply.bytes);
    else if (reply.t === 'failed') this.#events.failed(reply.key, reply.error);
    else {
      const resolve = this.#waiting.get(reply.id);
      this.#waiting.delete(reply.id);
      if (this.#waiting.size === 0) this.#worker.unref();
      resolve?.(reply.hits);
    }
  }

  #lose(why: string): void {
    if (this.#lost) return;
    this.#lost = true;
    this.#answerAll();
    this.#events.lost(why);
  }

  /** Searches still waiting are answered "no file": they read the table instead. */
  #answerAll(): void {
    for (const resolve of this.#waiting.values()) resolve(null);
    this.#waiting.clear();
    this.#worker.unref();
  }
}
