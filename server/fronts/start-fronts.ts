// Starts the HTTP threads (SVC_HTTP_THREADS) one after another on the public port: the first binds it
// (refusing a port another process holds), the rest join its sockets. Each gets a channel of its own to
// this thread, which answers its operation calls (./answer-calls.ts). Threads loaded early (./load-fronts.ts)
// are started first.
import { MessageChannel, type Worker } from 'node:worker_threads';
import { routes } from '../../bridge/routes.ts';
import type { Admission, SearchGateWatch } from '../../tools/admission.ts';
import { gateLength, GATE_SLOTS, shareSlot } from '../../tools/search-gate.ts';
import { operationNamed } from '../../tools/index.ts';
import { LEGACY_ERA } from '../mcp/handler.ts';
import { answerCalls, type Answering } from './answer-calls.ts';
import { hasEnded, loadFront } from './load-fronts.ts';
import { FRONT_COUNTS, type FrontData, type FrontStart, type FrontStarted } from './protocol.ts';

export interface Fronts {
  /** The port they listen on (the one bound, when PORT is 0). */
  readonly port: number;
  /** Connections the threads hold open now, and those they accepted since the start. */
  connections(): { open: number; accepted: number };
  /** The threads' event-loop delay since the last call, ms: the highest of their per-second p99s and maxima (SVC_LOAD_STATS=1). */
  takeLoopDelay(): { p99Ms: number; maxMs: number };
  /** Stops accepting, lets each thread finish the requests it holds (at most `graceMs`), and ends them. */
  close(graceMs?: number): Promise<void>;
}

export type FrontOptions = Omit<
  FrontData,
  'listen' | 'inside' | 'gate' | 'gateTenants' | 'routes' | 'searchOperations' | 'tools' | 'legacyEra'
> & {
  listen: Omit<FrontData['listen'], 'probe'>;
};

/** What a thread is told of the operations and the protocol, as data it can be sent (FrontData). */
export const frontCatalog: Pick<FrontData, 'routes' | 'searchOperations' | 'tools' | 'legacyEra'> = {
  routes: routes.filter((r) => !r.respond).map(({ method, path, operation, from }) => ({ method, path, operation, from })),
  searchOperations: routes.map((r) => r.operation).filter((name) => operationNamed(name).searchSlot === true),
  tools: routes.map((r) => r.operation),
  legacyEra: LEGACY_ERA,
};

function failure(started: Extract<FrontStarted, { failed: string }>): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(started.failed);
  if (started.code !== undefined) error.code = started.code;
  return error;
}

function ended(worker: Worker, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => void worker.terminate().then(() => resolve()), graceMs);
    worker.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** `loaded`: threads whose code loads already (loadFronts), taken first; the rest are started here. */
export async function startFronts(
  threads: number,
  options: FrontOptions,
  answering: Answering,
  log: (line: string) => void,
  loaded: Worker[] = [],
): Promise<Fronts> {
  const running = new Set<Worker>();
  const inside = new SharedArrayBuffer(4 * FRONT_COUNTS.length);
  const counts = new Int32Array(inside);
  let port = options.listen.port;
  let closing = false;
  // The admission answering now keeps the search lanes' states where the threads read them (it changes
  // when this process takes the ledger again after another held it).
  const gateTenants = options.apiKeys ? [...new Set(options.apiKeys.values())] : [options.tenant];
  const gate = new SharedArrayBuffer(4 * gateLength(gateTenants.length));
  const gateWatch = searchGateWatch(new Int32Array(gate), gateTenants);
  let watched: Admission | undefined;
  const answeringWatched: Answering = () => {
    const own = answering();
    const admission = own?.services.admission;
    if (admission && admission !== watched) {
      watched = admission;
      admission.watchSearchGate(gateWatch);
    }
    return own;
  };

  const start = async (probe: boolean): Promise<Worker> => {
    const { port1, port2 } = new MessageChannel();
    answerCalls(port1, answeringWatched);
    let worker = loaded.shift();
    while (worker && hasEnded(worker)) worker = loaded.shift();
    worker ??= loadFront();
    worker.ref();
    const started = await new Promise<FrontStarted>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`an HTTP thread ended (code ${code}) before it listened`)));
      const start: FrontStart = {
        start: { ...options, ...frontCatalog, inside, gate, gateTenants, listen: { ...options.listen, port, probe }, calls: port2 },
      };
      worker.postMessage(start, [port2]);
    }).catch((error: unknown) => {
      port1.close();
      throw error;
    });
    if ('failed' in started) {
      port1.close();
      await worker.terminate();
      throw failure(started);
    }
    port = started.listening;
    running.add(worker);
    worker.on('error', (error) => log(`memory-ledger: an HTTP thread failed: ${error.stack ?? error.message}`));
    worker.once('exit', () => {
      port1.close();
      running.delete(worker);
      // One thread lost must not leave the port to fewer listeners for good: another takes its place.
      if (!closing) start(false).catch((error: Error) => log(`memory-ledger: an HTTP thread could not restart: ${error.message}`));
    });
    return worker;
  };

  try {
    for (let i = 0; i < threads; i++) await start(i === 0);
  } catch (error) {
    closing = true;
    await Promise.all([...running, ...loaded].map((w) => w.terminate()));
    throw error;
  }
  // More loaded than asked for: not kept.
  for (const w of loaded.splice(0)) void w.terminate();
  return {
    port,
    connections: () => ({ open: Atomics.load(counts, FRONT_COUNTS.open), accepted: Atomics.load(counts, FRONT_COUNTS.accepted) }),
    takeLoopDelay: () => ({
      p99Ms: Atomics.exchange(counts, FRONT_COUNTS.loopP99Us, 0) / 1000,
      maxMs: Atomics.exchange(counts, FRONT_COUNTS.loopMaxUs, 0) / 1000,
    }),
    async close(graceMs = 10_000) {
      closing = true;
      const all = [...running];
      for (const w of all) w.postMessage({ close: true });
      await Promise.all(all.map((w) => ended(w, graceMs)));
    },
  };
}

/** Writes the lanes' states where the threads read them (tools/search-gate.ts); a tenant not listed has no share slot. */
export function searchGateWatch(gate: Int32Array, tenants: readonly string[]): SearchGateWatch {
  const at = new Map(tenants.map((t, i) => [t, i]));
  return {
    crowded: (lane, retryAfterS) =>
      Atomics.store(gate, lane === 'heavy' ? GATE_SLOTS.heavyCrowded : GATE_SLOTS.searchesCrowded, retryAfterS),
    share: (lane, tenant, retryAfterS) => {
      const i = at.get(tenant);
      if (i !== undefined) Atomics.store(gate, shareSlot(i, lane === 'heavy' ? 0 : 1), retryAfterS);
    },
  };
}
