// For diagnosing load only: with SVC_LOAD_STATS=1 the server prints one line every 10 s to stderr,
// `load-stats {...}`: the event loop's delay over the window (p50/p99/max, ms: how long a request that
// arrived then waited before JavaScript saw it, and so the floor under any answer, a refusal included), the
// collector's pauses, memory split by where it lives (heap, external, arrayBuffers, and the native rest of
// RSS: LanceDB's and Arrow's buffers, Kuzu's pages, the allocator's slack), the read model's size, requests
// inside and the HTTP server's sockets. The load bench reads these lines. SVC_LOAD_STATS_MS changes the 10 s.
import type { Server, Socket } from 'node:net';
import { constants, monitorEventLoopDelay, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import type { Ledger } from '../storage/log/ledger.ts';
import type { Services } from '../tools/context.ts';

const MB = 1024 * 1024;
const round = (n: number): number => Math.round(n * 100) / 100;

export interface LoadStatsSources {
  services: () => Services | undefined;
  ledger?: () => Ledger | undefined;
  /** The HTTP server: connections accepted over the window and open now (its 'connection' events, from every listening socket). */
  server?: Server;
  /**
   * With HTTP threads, which hold the public connections (the server above then holds only theirs, passed
   * on): their connections open now and accepted since the start. Their sockets' states are not sampled.
   */
  threads?: () => { open: number; accepted: number; loop: { p99Ms: number; maxMs: number } } | undefined;
}

export function startLoadStats(sources: LoadStatsSources, everyMs = Number(process.env.SVC_LOAD_STATS_MS ?? 10_000)): () => void {
  const { services, ledger, server, threads } = sources;
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  // The collector's pauses over the window: a long loop delay is either our code or these.
  const gc = { minor: 0, major: 0, ms: 0, maxMs: 0 };
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) gc.major++;
      else gc.minor++;
      gc.ms += entry.duration;
      gc.maxMs = Math.max(gc.maxMs, entry.duration);
    }
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  let accepted = 0;
  const sockets = new Set<Socket>();
  const onConnection = (socket: Socket): void => {
    accepted++;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  // Sockets Node has stopped reading (a request waits unread in the kernel) and those whose answer waits
  // for the client to read (writableNeedDrain), sampled at each line.
  const socketStates = (): { sockets_paused: number; sockets_need_drain: number } => {
    let paused = 0;
    let drain = 0;
    for (const socket of sockets) {
      if (socket.isPaused()) paused++;
      if (socket.writableNeedDrain) drain++;
    }
    return { sockets_paused: paused, sockets_need_drain: drain };
  };
  // Connections open now and accepted over the window: the HTTP threads' when they hold the public ones.
  let threadsAccepted = 0;
  const connections = (): Record<string, number> => {
    const held = threads?.();
    if (held) {
      const line = {
        connections_open: held.open,
        connections_accepted: held.accepted - threadsAccepted,
        // The HTTP threads' own loops: a refusal they make waits for theirs alone.
        http_loop_p99_ms: round(held.loop.p99Ms),
        http_loop_max_ms: round(held.loop.maxMs),
      };
      threadsAccepted = held.accepted;
      return line;
    }
    if (!server) return {};
    const line = { connections_open: sockets.size, connections_accepted: accepted, ...socketStates() };
    accepted = 0;
    return line;
  };
  server?.on('connection', onConnection);
  const timer = setInterval(() => {
    const resident = ledger?.()?.residentStats();
    const m = process.memoryUsage();
    const line = {
      loop_p50_ms: round(delay.percentile(50) / 1e6),
      loop_p99_ms: round(delay.percentile(99) / 1e6),
      loop_max_ms: round(delay.max / 1e6),
      gc: { minor: gc.minor, major: gc.major, ms: Math.round(gc.ms), max_ms: round(gc.maxMs) },
      rss_mb: round(m.rss / MB),
      heap_used_mb: round(m.heapUsed / MB),
      heap_total_mb: round(m.heapTotal / MB),
      external_mb: round(m.external / MB),
      array_buffers_mb: round(m.arrayBuffers / MB),
      native_mb: round((m.rss - m.heapTotal - m.external) / MB),
      ...Object.fromEntries(
        Object.entries(services()?.search?.memory() ?? {}).map(([k, v]) => [
          k.endsWith('Items') ? k : `${k}_mb`,
          k.endsWith('Items') ? v : round(v / MB),
        ]),
      ),
      // The read model's own estimate (rows × ROW_BYTES): what "the data written" costs in the heap.
      ...(resident
        ? { readModel_mb: round(resident.bytes / MB), resident_tenants: resident.tenants, resident_spaces: resident.spaces }
        : {}),
      // Rows held in memory behind the engines: acknowledged and not yet copied into the store, and
      // committed and not yet indexed for search (a bulk fill outruns both).
      journal_rows: ledger?.()?.journalRows(),
      index_pending_rows: services()?.search?.status().pendingRows,
      // Searches without a space answered from the spaces holding what they read, and from the tenant's view.
      ...Object.fromEntries(Object.entries(ledger?.()?.acrossStats() ?? {}).map(([k, v]) => [`search_across_${k}`, v])),
      ...services()?.admission?.stats(),
      // The store's shared read turns since the start: lookups by id and space loads (turns, requests,
      // their summed wait for a turn and time in turns, ms).
      store_turns: ledger?.()?.readTurnStats(),
      // Ids of reads by id whose spaces the tables of ids' places answered, and those asked of the store.
      id_places: placesLine(ledger?.()?.placesStats()),
      // Space copies loaded for searches since the start: loads, their time and their wait for a turn (ms).
      space_copies: services()?.search?.spaceCopies(),
      ...connections(),
    };
    Object.assign(gc, { minor: 0, major: 0, ms: 0, maxMs: 0 });
    delay.reset();
    process.stderr.write(`load-stats ${JSON.stringify(line)}\n`);
  }, everyMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    gcObserver.disconnect();
    server?.off('connection', onConnection);
    delay.disable();
  };
}

function placesLine(stats: ReturnType<Ledger['placesStats']> | undefined): Record<string, number> | undefined {
  return (
    stats && {
      answered: stats.answered,
      missed: stats.missed,
      mb: round(stats.bytes / MB),
      builds: stats.builds,
      build_ms: Math.round(stats.buildMs),
      restored: stats.restored,
    }
  );
}
