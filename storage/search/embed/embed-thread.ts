// Embedding large batches on two threads. Measured on the 50k-row catch-up, the main thread was busy
// 84-99% of the time, embedding (hashed features plus word vectors) most of it, while LanceDB's writes ran
// on its own threads: the two cores were never both busy. The search index hands this thread half of each
// large batch and embeds the other half itself meanwhile (search-index.ts, THREAD_SHARE).
// The vectors are the same functions' output (local-embedder.ts, word-vectors.ts), bit for bit.
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../../start-worker.ts';
import { rowViews } from './embed-batch.ts';
import { LOCAL_DIMENSION } from './local-embedder.ts';
import type { WordVectorParts, WordVectors } from './word-vectors.ts';

export interface ThreadSetup {
  /** Whether to compute the local embedder's vectors (a remote embedder's come from its server). */
  local: boolean;
  words: WordVectorParts | null;
}

export interface EmbedRequest {
  id: number;
  texts: readonly string[];
}

export interface EmbedReply {
  id: number;
  local: Float32Array | null;
  wvecs: Float32Array | null;
  error?: string;
}

export interface ThreadVectors {
  /** The local embedder's vectors, or null when the thread was not asked for them. */
  local: Float32Array[] | null;
  wvecs: Float32Array[] | null;
}

export class EmbedThread {
  readonly #worker: Worker;
  readonly #wordDimension: number;
  readonly #pending = new Map<number, { resolve: (v: ThreadVectors) => void; reject: (e: Error) => void }>();
  #next = 0;
  #failure: Error | null = null;

  private constructor(worker: Worker, wordDimension: number) {
    this.#worker = worker;
    this.#wordDimension = wordDimension;
    // Idle, the thread must not keep the process alive; a batch in flight refs it (see embed).
    worker.unref();
    worker.on('message', (reply: EmbedReply) => this.#settle(reply));
    worker.on('error', (error) => this.#fail(error));
    worker.on('exit', (code) => this.#fail(new Error(`the embedding thread exited (code ${code})`)));
  }

  static start(local: boolean, words: WordVectors | null): EmbedThread {
    const setup: ThreadSetup = { local, words: words?.parts() ?? null };
    return new EmbedThread(startWorker(import.meta.url, 'embed-thread-worker', setup), words?.dimension ?? 0);
  }

  /** Why the thread stopped, or null while it works; a stopped thread refuses every batch. */
  get failure(): Error | null {
    return this.#failure;
  }

  embed(texts: readonly string[]): Promise<ThreadVectors> {
    if (this.#failure) return Promise.reject(this.#failure);
    const id = ++this.#next;
    if (this.#pending.size === 0) this.#worker.ref();
    const reply = new Promise<ThreadVectors>((resolve, reject) => this.#pending.set(id, { resolve, reject }));
    this.#worker.postMessage({ id, texts } satisfies EmbedRequest);
    return reply;
  }

  #settle(reply: EmbedReply): void {
    const waiter = this.#pending.get(reply.id);
    if (!waiter) return;
    this.#pending.delete(reply.id);
    if (this.#pending.size === 0) this.#worker.unref();
    if (reply.error !== undefined) return waiter.reject(new Error(`embedding thread: ${reply.error}`));
    waiter.resolve({
      local: reply.local ? rowViews(reply.local, LOCAL_DIMENSION) : null,
      wvecs: reply.wvecs && this.#wordDimension > 0 ? rowViews(reply.wvecs, this.#wordDimension) : null,
    });
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    for (const waiter of this.#pending.values()) waiter.reject(this.#failure);
    this.#pending.clear();
  }

  async close(): Promise<void> {
    this.#failure ??= new Error('the embedding thread is closed');
    await this.#worker.terminate();
  }
}
