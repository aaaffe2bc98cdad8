// An HTTP thread loads only what reading a request and handing it on takes: not the operations, zod or
// the MCP SDK, which were most of a thread's memory and load time (docs/load.md). What it needs of them
// it is sent (FrontData). Checked on a real thread: every module its entry resolves is recorded.
import * as nodeModule from 'node:module';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';

const canRecord = typeof (nodeModule as { registerHooks?: unknown }).registerHooks === 'function';

/** The modules resolved while a thread imports `entry` (its code then waits for its first message). */
function modulesLoadedBy(entry: URL): Promise<string[]> {
  const tsx = import.meta.resolve('tsx/esm/api');
  const code = `
    const { registerHooks } = await import('node:module');
    const { parentPort } = await import('node:worker_threads');
    const seen = new Set();
    registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen.add(r.url); return r; } });
    const { register } = await import(${JSON.stringify(tsx)});
    register();
    await import(${JSON.stringify(entry.href)});
    parentPort.postMessage({ loaded: [...seen] });
  `;
  const worker = new Worker(code, { eval: true });
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.on('message', (message: { loaded?: string[] }) => {
      if (!message.loaded) return;
      void worker.terminate();
      resolve(message.loaded);
    });
  });
}

describe('an HTTP thread stays light', () => {
  it.skipIf(!canRecord)('loads neither the operations, the storage, zod nor the MCP SDK', async () => {
    const loaded = await modulesLoadedBy(new URL('./front.ts', import.meta.url));
    const ours = loaded.filter((url) => url.startsWith('file:') && !url.includes('/node_modules/'));
    expect(ours.some((url) => url.endsWith('/server/fronts/front-answers.ts'))).toBe(true);
    const heavy = loaded.filter((url) =>
      /\/node_modules\/(zod|@modelcontextprotocol)\/|\/tools\/index\.ts$|\/tools\/operation\.ts$|\/storage\//.test(url),
    );
    expect(heavy).toEqual([]);
  });
});
