// The copy files' thread (see copy-thread.ts): a CopyStore asked in order, each answer sent back with the
// store's counts.
import { parentPort, workerData } from 'node:worker_threads';
import { CopyStore } from './copy-store.ts';
import type { CopyReply, CopyRequest } from './copy-thread.ts';

const store = new CopyStore((workerData as { dir: string }).dir);
const send = (reply: CopyReply): void => parentPort?.postMessage(reply);
const counts = (): { reads: number; merges: number } => ({ ...store.counts });

function written(key: string, write: () => number): void {
  try {
    const bytes = write();
    send({ t: 'sized', key, bytes, ...counts() });
  } catch (error) {
    send({ t: 'failed', key, error: String(error), ...counts() });
  }
}

parentPort?.on('message', (m: CopyRequest) => {
  switch (m.t) {
    case 'write':
      return written(m.key, () => store.write(m.key, m.rows, m.tokens));
    case 'append':
      return written(m.key, () => store.append(m.key, m.rows, m.tokens, m.create));
    case 'remove':
      return store.remove(m.key);
    case 'search':
      return send({ t: 'found', id: m.id, hits: store.search(m.key, m.rows, m.asked), ...counts() });
    case 'close':
      store.close();
      parentPort?.close();
  }
});
