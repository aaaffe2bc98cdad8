// The HTTP threads' code loads while the ledger opens: loaded after it (~0.17 CPU s when a thread still
// loaded the operations and the MCP SDK, ~0.05 s since), it put a restart's first answer later on two
// cores. The threads are started at once and wait for their settings (./start-fronts.ts sends them). Only the worker module is touched here, so the
// engine's open does not wait for the threads' code on this thread.
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../../storage/start-worker.ts';

const ended = new WeakSet<Worker>();

/** One HTTP thread loading its code; it keeps the process alive only once started (startFronts). */
export function loadFront(): Worker {
  const worker = startWorker(import.meta.url, 'front', null);
  worker.unref();
  // Met by startFronts once it is started; before, a thread that failed to load is replaced there.
  worker.on('error', () => undefined);
  worker.once('exit', () => ended.add(worker));
  return worker;
}

/** Whether a thread loaded early has ended (it failed to load, or was terminated) before it was started. */
export function hasEnded(worker: Worker): boolean {
  return ended.has(worker);
}

/** `threads` HTTP threads loading their code, for startFronts. */
export function loadFronts(threads: number): Worker[] {
  return Array.from({ length: threads }, loadFront);
}
