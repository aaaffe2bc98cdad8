// `memory-ledger serve`: the HTTP server on the embedded stores in SVC_DATA_DIR. When `stdio` processes
// share the folder, the first process holds the ledger and the others forward to it (server/local/).
// SIGTERM and SIGINT stop taking requests, let queued writes commit, and close the stores.
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import type { Hono } from 'hono';
import type { RestEnv } from '../bridge/rest.ts';
import type { Ledger } from '../storage/log/ledger.ts';
import { readConfig } from './config.ts';
import { FolderHeldError } from './local/folder-held.ts';
import { LocalLink, stopOnSignals, type Holding } from './local/link.ts';
import { SERVICE_VERSION } from './version.ts';
import { describeLimits } from '../tools/admission.ts';
import type { Services } from '../tools/context.ts';
import { startLoadStats } from './load-stats.ts';
import { listenWide } from './listen-wide.ts';
import { loadFronts } from './fronts/load-fronts.ts';
import { applyHeapGrowth, describeMemory } from './heap-growth.ts';
import type { Admission } from '../tools/admission.ts';
import type { Config } from './config.ts';
import type { EtcdPlacement } from './cluster/etcd-placement.ts';
import type { placementGate } from './cluster/gate.ts';
import type { InFlight, placementStatus } from './cluster/placement-route.ts';

/** The etcd client is loaded only on a server configured for a cluster. */
async function startPlacement(
  etcd: NonNullable<Config['etcd']>,
  serverId: string,
): Promise<{ etcd: EtcdPlacement; gate: typeof placementGate; inFlight: InFlight; status: typeof placementStatus }> {
  const [{ EtcdPlacement }, { placementGate }, { InFlight, placementStatus }] = await Promise.all([
    import('./cluster/etcd-placement.ts'),
    import('./cluster/gate.ts'),
    import('./cluster/placement-route.ts'),
  ]);
  return {
    etcd: EtcdPlacement.start({ hosts: etcd.hosts, serverId, staleMs: etcd.staleMs, log: (line) => console.log(line) }),
    gate: placementGate,
    inFlight: new InFlight(),
    status: placementStatus,
  };
}

export async function runServe(): Promise<void> {
  const config = readConfig();
  // Before the stores open and the first requests allocate: V8 reads it at every full collection.
  const growth = applyHeapGrowth(config.heapGrowthPercent);
  // HTTP threads serve the port and call this thread for each operation (server/fronts/). Not in a
  // cluster or under a server id: the placement gate and the server header are this thread's app's.
  // Their code loads while the store opens.
  const threads = config.serverId === null && !config.etcd ? config.httpThreads : 0;
  const loadedFronts = threads > 0 ? loadFronts(threads) : [];
  let link: LocalLink;
  try {
    link = await LocalLink.open(config, 'serve', (m) => console.log(m));
  } catch (error) {
    if (!(error instanceof FolderHeldError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
  // Loaded while the store opened (link.ts): imported here, not above, so the engine's open starts first.
  const [
    { createAdaptorServer },
    { createApp },
    { addressLines },
    { linkedFetch },
    { createServerShedding },
    lance,
    { indexQueueRows },
    { heavyOperationNames },
  ] = await Promise.all([
    import('@hono/node-server'),
    import('./app.ts'),
    import('./discovery.ts'),
    import('./local/http-forward.ts'),
    import('./early-shed.ts'),
    import('../storage/search/lance/lance-index.ts'),
    import('../storage/search/search-index.ts'),
    import('../tools/index.ts'),
  ]);
  // In a cluster, placements from etcd decide which tenants this server answers for (server/cluster/).
  const placement = config.etcd ? await startPlacement(config.etcd, config.serverId ?? '') : null;
  // This serve's own app (its keys, its tenant) on whichever ledger it holds, built once per ledger.
  let own: { ledger: Ledger; app: Hono<RestEnv>; services: Services } | null = null;
  const appOf = ({ held }: Holding): Hono<RestEnv> => {
    if (own?.ledger !== held.ledger) {
      const ledger = held.ledger;
      if (placement) ledger.onCommit((group) => placement.etcd.noteCommit(group, (space) => ledger.firstWriterOf(space)));
      own = {
        ledger: held.ledger,
        services: held.started.services,
        app: createApp({
          config,
          ledger: held.ledger,
          services: held.started.services,
          checks: held.started.checks,
          mount: held.started.mount,
          gate: placement
            ? placement.gate({
                config,
                table: placement.etcd.table,
                firstWriterOf: (space) => ledger.firstWriterOf(space),
                inFlight: placement.inFlight,
              })
            : undefined,
          placementStatus: placement
            ? (tenant) =>
                placement.status(tenant, { serverId: config.serverId ?? '', table: placement.etcd.table, inFlight: placement.inFlight })
            : undefined,
          // Deletable only where placed elsewhere: never here, frozen here, or while placements are unknown.
          servesTenant: placement ? (tenant) => placement.etcd.table.admit(tenant, Date.now()).kind !== 'elsewhere' : undefined,
        }),
      };
    }
    return own.app;
  };
  // A REST request the gate refuses anyway is answered by the listener, before Hono (server/early-shed.ts).
  // Not in a cluster, where the placement gate answers first for tenants placed elsewhere.
  const admission = (): Admission | undefined =>
    !placement && own && link.holding?.held.ledger === own.ledger ? own.services.admission : undefined;
  const server = createAdaptorServer({
    fetch: linkedFetch(link, config, appOf),
    hostname: config.host,
    createServer: createServerShedding(admission),
  }) as HttpServer;
  if (config.httpThreads > 0 && threads === 0) console.log('memory-ledger: SVC_HTTP_THREADS is not used with SVC_SERVER_ID or SVC_ETCD');
  const answering = (): { ledger: Ledger; services: Services } | null => {
    const holding = link.holding;
    if (!holding) return null;
    appOf(holding);
    return own && { ledger: own.ledger, services: own.services };
  };
  let listening: { close: () => Promise<void> | void } | undefined;
  let threadConnections: (() => { open: number; accepted: number; loop: { p99Ms: number; maxMs: number } }) | undefined;
  const listened: Promise<{ address: AddressInfo; close: () => Promise<void> | void }> =
    threads > 0
      ? listenWide(server, { port: 0, host: '127.0.0.1', backlog: config.listenBacklog, sockets: 1 }).then(async (inner) => {
          const innerPort = (server.address() as AddressInfo).port;
          const { startFronts } = await import('./fronts/start-fronts.ts');
          const fronts = await startFronts(
            threads,
            {
              listen: { port: config.port, host: config.host, backlog: config.listenBacklog, sockets: config.listenSockets },
              inner: { host: '127.0.0.1', port: innerPort },
              apiKeys: config.apiKeys,
              tenant: config.tenant,
              maxBodyBytes: config.maxBodyBytes,
              maxRequests: config.admission.maxRequests,
            },
            answering,
            (line) => console.error(line),
            loadedFronts,
          ).catch((error: unknown) => {
            inner.close();
            server.close();
            throw error;
          });
          threadConnections = () => ({ ...fronts.connections(), loop: fronts.takeLoopDelay() });
          const family = config.host.includes(':') ? 'IPv6' : 'IPv4';
          return {
            address: { address: config.host, port: fronts.port, family },
            close: async () => {
              await fronts.close();
              inner.close();
            },
          };
        })
      : listenWide(server, {
          port: config.port,
          host: config.host,
          backlog: config.listenBacklog,
          sockets: config.listenSockets,
        }).then((wide) => ({ address: server.address() as AddressInfo, close: wide.close }));
  listened.then((wide) => {
    listening = wide;
    server.once('error', listenFailed);
    const info = wide.address;
    console.log(
      `memory-ledger ${SERVICE_VERSION} listening on http://${info.address}:${info.port} (data: ${config.dataDir}, ${config.apiKeys ? 'hosted' : `open, tenant ${config.tenant}`}, ${link.role}${config.serverId ? `, server ${config.serverId}` : ''}${config.etcd ? `, placement from etcd ${config.etcd.hosts.join(',')}` : ''}${threads > 0 ? `, ${threads} HTTP thread${threads === 1 ? '' : 's'}` : ''})`,
    );
    // A wildcard bind is reached on loopback from this machine; print an address one can open.
    const address = info.address === '0.0.0.0' ? '127.0.0.1' : info.address === '::' ? '::1' : info.address;
    const host = address.includes(':') ? `[${address}]` : address;
    for (const line of addressLines(`http://${host}:${info.port}`)) console.log(line);
    // A wildcard bind advertises the machine's name: set SVC_ADVERTISE_URL when others reach it otherwise.
    const advertised = address === info.address ? `http://${host}:${info.port}` : `http://${hostname()}:${info.port}`;
    placement?.etcd.register(config.etcd?.advertiseUrl ?? advertised);
    // Logged once it serves: a process refused the folder prints nothing but its one line on stderr.
    console.log(describeLimits(config.admission, heavyOperationNames));
    console.log(
      describeMemory({
        growth,
        memoryMb: config.memoryMb,
        kuzuBufferMb: config.kuzuBufferMb,
        spaceCopiesMb: lance.spaceCopyBytes() / 1048576,
        vectorMirrorsMb: lance.vectorMirrorBytes() / 1048576,
        lanceCachesMb: lance.LANCE_CACHE_BYTES / 1048576,
        idPlacesMb: config.idPlacesMb,
        indexQueueRows: indexQueueRows(),
      }),
    );
    if (process.env.SVC_LOAD_STATS === '1')
      startLoadStats({ services: () => own?.services, ledger: () => own?.ledger, server, threads: () => threadConnections?.() });
  }, listenFailed);
  stopOnSignals(link, async () => {
    await listening?.close();
    server.close();
    await placement?.etcd.close();
  });
  // A taken port is a set-up mistake, not a crash: one line saying what to change, no stack trace.
  function listenFailed(error: NodeJS.ErrnoException): void {
    if (error.code === 'EADDRINUSE' || error.code === 'EACCES') {
      const why = error.code === 'EADDRINUSE' ? 'is already in use' : 'is not allowed for this user';
      console.error(`memory-ledger: ${config.host}:${config.port} ${why}; set PORT (and HOST) to listen elsewhere`);
    } else {
      console.error(`memory-ledger: cannot listen on ${config.host}:${config.port}: ${error.message}`);
    }
    setTimeout(() => process.exit(1), 15_000).unref();
    void link
      .close()
      .catch(() => undefined)
      .finally(() => process.exit(1));
  }
}
