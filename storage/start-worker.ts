// Starts a worker thread whose entry lies beside the module asking: TypeScript in a source checkout, run
// through tsx (bin/memory-ledger.mjs), JavaScript in the build.
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, type TransferListItem } from 'node:worker_threads';

/** `entry`: the worker module's name without its extension, beside `besideUrl` (the caller's import.meta.url). */
export function startWorker(besideUrl: string, entry: string, workerData: unknown, transferList: TransferListItem[] = []): Worker {
  const ext = extname(fileURLToPath(besideUrl));
  const url = new URL(`./${entry}${ext}`, besideUrl);
  if (ext !== '.ts') return new Worker(url, { workerData, transferList });
  // A worker starts without the parent's loader, so it registers tsx itself before importing its entry.
  const tsx = import.meta.resolve('tsx/esm/api');
  const code = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(url.href)}); })`;
  return new Worker(code, { eval: true, workerData, transferList });
}
