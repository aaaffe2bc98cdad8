// `memory-ledger serve`: the HTTP server on the embedded stores in SVC_DATA_DIR. SIGTERM and SIGINT stop
// taking requests, let queued writes commit, and close the stores.
import { serve } from '@hono/node-server';
import { Ledger } from '../storage/ledger.ts';
import { createApp } from './app.ts';
import { readConfig } from './config.ts';
import { gracefulStop } from './shutdown.ts';
import { startServices } from './services.ts';
import { SERVICE_VERSION } from './version.ts';

export async function runServe(): Promise<void> {
  const config = readConfig();
  const ledger = await Ledger.open(config.dataDir);
  const started = await startServices(config, ledger);
  const app = createApp({ config, ledger, services: started.services, checks: started.checks, mount: started.mount });
  const server = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, (info) => {
    console.log(`memory-ledger ${SERVICE_VERSION} listening on http://${info.address}:${info.port} (data: ${config.dataDir}, ${config.apiKeys ? 'hosted' : `open, tenant ${config.tenant}`})`);
  });
  gracefulStop({ log: (m) => console.log(m), closeDoor: () => { server.close(); }, started, ledger });
  // A taken port is a set-up mistake, not a crash: one line saying what to change, no stack trace.
  server.once('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EADDRINUSE' || error.code === 'EACCES') {
      const why = error.code === 'EADDRINUSE' ? 'is already in use' : 'is not allowed for this user';
      console.error(`memory-ledger: ${config.host}:${config.port} ${why}; set PORT (and HOST) to listen elsewhere`);
    } else {
      console.error(`memory-ledger: cannot listen on ${config.host}:${config.port}: ${error.message}`);
    }
    setTimeout(() => process.exit(1), 15_000).unref();
    void started.close().catch(() => undefined).then(() => ledger.close()).finally(() => process.exit(1));
  });
}
