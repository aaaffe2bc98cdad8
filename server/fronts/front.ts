// One HTTP thread (SVC_HTTP_THREADS): it listens on the public port beside the others, answers operation
// calls through the ledger thread (./front-answers.ts), and sends everything else there whole
// (./pass-on.ts). Its code loads as soon as it is started, while the ledger opens; its settings come in
// its first message (FrontStart). Stopped by a `close` message: it stops accepting, finishes what it
// holds, and ends.
import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parentPort } from 'node:worker_threads';
import { listenWide } from '../listen-wide.ts';
import { frontListener } from './front-listener.ts';
import { LedgerCalls } from './ledger-calls.ts';
import { PassOn } from './pass-on.ts';
import { FRONT_COUNTS, type FrontStart, type FrontStarted } from './protocol.ts';

const control = parentPort;
if (!control) throw new Error('server/fronts/front.ts runs as a worker thread');
control.once('message', ({ start: data }: FrontStart) => {
  const calls = new LedgerCalls(data.calls);
  const passOn = new PassOn(data.inner);
  const server = createServer(frontListener({ ...data, host: data.listen.host }, calls, passOn));
  // Counted across the threads for the load-stats line (server/load-stats.ts), which cannot see these sockets.
  const counts = new Int32Array(data.inside);
  server.on('connection', (socket: Socket) => {
    Atomics.add(counts, FRONT_COUNTS.open, 1);
    Atomics.add(counts, FRONT_COUNTS.accepted, 1);
    socket.once('close', () => Atomics.sub(counts, FRONT_COUNTS.open, 1));
  });
  if (process.env.SVC_LOAD_STATS === '1') reportLoopDelay(counts);
  listenWide(server, data.listen).then(
    (wide) => {
      const address = server.address();
      control.postMessage({ listening: typeof address === 'object' && address ? address.port : data.listen.port } satisfies FrontStarted);
      control.on('message', (message: { close?: true }) => {
        if (!message.close) return;
        wide.close();
        server.close(() => {
          passOn.close();
          data.calls.close();
          control.close();
        });
        server.closeIdleConnections();
      });
    },
    (error: NodeJS.ErrnoException) => control.postMessage({ failed: error.message, code: error.code } satisfies FrontStarted),
  );
});

/** Every second, raises the shared event-loop slots to this thread's p99 and maximum delay of that second. */
function reportLoopDelay(counts: Int32Array): void {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const raise = (slot: number, us: number): void => {
    for (let seen = Atomics.load(counts, slot); us > seen; seen = Atomics.load(counts, slot))
      if (Atomics.compareExchange(counts, slot, seen, us) === seen) return;
  };
  setInterval(() => {
    raise(FRONT_COUNTS.loopP99Us, Math.round(delay.percentile(99) / 1000));
    raise(FRONT_COUNTS.loopMaxUs, Math.round(delay.max / 1000));
    delay.reset();
  }, 1000).unref();
}
