// The copy files' thread (see copy-thread.ts): a CopyStore asked in order per file, searches first
// (keyed-queue.ts), each answer sent back with the store's counts.
import { parentPort, workerData } from 'node:worker_threads';
import { CopyStore } from './copy-store.ts';
import type { CopyReply, CopyRequest } from './copy-thread.ts';
import { KeyedQueue } from './keyed-queue.ts';

/** Longest stretch of writing before the thread takes the messages that came meanwhile (a search jumps the writes). */
const STRETCH_MS = 2;

type FileRequest = Exclude<CopyRequest, { t: 'close' }>;

const store = new CopyStore((workerData as { dir: string }).dir);
const queue = new KeyedQueue<FileRequest>();
const send = (reply: CopyReply): void => parentPort?.postMessage(reply);
const counts = (): { reads: number; merges: number } => ({ ...store.counts });
let closing = false;
let scheduled = false;

function run(m: FileRequest): void {
  switch (m.t) {
    case 'append':
      try {
        return send({ t: 'sized', key: m.key, bytes: store.append(m.key, m.rows, m.tokens, m.create), ...counts() });
      } catch (error) {
        return send({ t: 'failed', key: m.key, error: String(error), ...counts() });
      }
    case 'remove':
      return store.remove(m.key);
    case 'search':
      return send({ t: 'found', id: m.id, hits: store.search(m.key, m.rows, m.asked), ...counts() });
  }
}

/** Does what waits; after STRETCH_MS with no search waiting, lets the messages that came meanwhile in first. */
function drain(): void {
  scheduled = false;
  const start = performance.now();
  for (let m = queue.next(); m; m = queue.next()) {
    run(m);
    if (!queue.urgent && performance.now() - start > STRETCH_MS) break;
  }
  if (queue.size > 0) schedule();
  else if (closing) {
    store.close();
    parentPort?.close();
  }
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(drain);
}

parentPort?.on('message', (m: CopyRequest) => {
  if (m.t === 'close') closing = true;
  else queue.push(m, m.t === 'search');
  schedule();
});
