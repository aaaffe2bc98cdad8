// HTTP threads loaded while the ledger opens (load-fronts.ts) are the ones started: one that ended before
// its start is replaced, and one loaded beyond the count asked for is ended, not left running. Their
// connections are counted across the threads.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFronts } from './load-fronts.ts';
import { startFronts } from './start-fronts.ts';

let inner: Server;
let innerPort = 0;

beforeAll(async () => {
  // The ledger thread's own listener, as a pass-on target: it says who answered.
  inner = createServer((req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(`inner ${req.url}`));
  await new Promise<void>((resolve) => inner.listen(0, '127.0.0.1', resolve));
  innerPort = (inner.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => inner.close(resolve));
});

const exited = (w: Worker): Promise<number> => new Promise((resolve) => w.once('exit', resolve));

describe('HTTP threads loaded early', () => {
  it('starts the loaded threads, replacing one that ended, and ends those not needed', async () => {
    const loaded = loadFronts(3);
    const [dead, used, spare] = loaded as [Worker, Worker, Worker];
    const deadExit = exited(dead);
    await dead.terminate();
    await deadExit;
    const spareExit = exited(spare);
    const lines: string[] = [];
    const fronts = await startFronts(
      1,
      {
        listen: { port: 0, host: '127.0.0.1', backlog: 64, sockets: 1 },
        inner: { host: '127.0.0.1', port: innerPort },
        apiKeys: null,
        tenant: 'default',
        maxBodyBytes: 1 << 20,
        maxRequests: 8,
      },
      () => null,
      (line) => lines.push(line),
      loaded,
    );
    try {
      // The thread listens and passes what it does not answer to the inner listener.
      const answer = await fetch(`http://127.0.0.1:${fronts.port}/v1/version`);
      expect(answer.status).toBe(200);
      expect(await answer.text()).toBe('inner /v1/version');
      // Its connection is counted for the load-stats line, which cannot see the threads' sockets.
      expect(fronts.connections()).toEqual({ open: 1, accepted: 1 });
      // The spare thread was ended; the used one runs.
      expect(await spareExit).toBeTypeOf('number');
      expect(used.threadId).toBeGreaterThan(0);
      expect(lines).toEqual([]);
    } finally {
      await fronts.close(2_000);
    }
  });
});
