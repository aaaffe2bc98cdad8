// The embedding thread's side (see embed-thread.ts): texts in, the local embedder's and the word
// vectors' flat arrays out, transferred rather than copied.
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { indexNice } from '../lance/index-priority.ts';
import { embedBatch } from './embed-batch.ts';
import type { EmbedReply, EmbedRequest, ThreadSetup } from './embed-thread.ts';
import { WordVectors } from './word-vectors.ts';

const setup = workerData as ThreadSetup;
// SVC_INDEX_NICE lowers the index's threads for bulk imports (index-priority.ts); this one is the index's
// too. On Linux a thread's priority is its own, and setpriority on "process 0" sets the calling thread's.
const nice = indexNice();
if (nice > 0 && process.platform === 'linux') setPriority(nice);
const words = setup.words ? WordVectors.fromParts(setup.words) : null;

parentPort?.on('message', ({ id, texts }: EmbedRequest) => {
  try {
    const { local, wvecs } = embedBatch(texts, setup.local, words);
    const reply: EmbedReply = { id, local, wvecs };
    parentPort?.postMessage(
      reply,
      [local?.buffer, wvecs?.buffer].filter((b): b is ArrayBuffer => b !== undefined),
    );
  } catch (error) {
    parentPort?.postMessage({ id, local: null, wvecs: null, error: (error as Error).message } satisfies EmbedReply);
  }
});
