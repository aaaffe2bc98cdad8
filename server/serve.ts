// `memory-ledger serve`: the HTTP server on the embedded stores in SVC_DATA_DIR. When `stdio` processes
// share the folder, the first process holds the ledger and the others forward to it (server/local/).
// SIGTERM and SIGINT stop taking requests, let queued writes commit, and close the stores.
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import type { RestEnv } from '../bridge/rest.ts';
import type { Ledger } from '../storage/ledger.ts';
import { createApp } from './app.ts';
import { readConfig } from './config.ts';
import { FolderHeldError } from './local/folder-held.ts';
import { linkedFetch } from './local/http-forward.ts';
import { LocalLink, stopOnSignals, type Holding } from './local/link.ts';
import { SERVICE_VERSION } from './version.ts';
import { describeLimits } from '../tools/admission.ts';

export async function runServe(): Promise<void> {
  const config = readConfig();
  let link: LocalLink;
  try {
    link = await LocalLink.open(config, 'serve', (m) => console.log(m));
  } catch (error) {
    if (!(error instanceof FolderHeldError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
  // This serve's own app (its keys, its tenant) on whichever ledger it holds, built once per ledger.
  let own: { ledger: Ledger; app: Hono<RestEnv> } | null = null;
  const appOf = ({ held }: Holding): Hono<RestEnv> => {
    if (own?.ledger !== held.ledger)
      own = {
        ledger: held.ledger,
        app: createApp({
          config,
          ledger: held.ledger,
          services: held.started.services,
          checks: held.started.checks,
          mount: held.started.mount,
        }),
      };
    return own.app;
  };
  const server = serve({ fetch: linkedFetch(link, config, appOf), port: config.port, hostname: config.host }, (info) => {
    console.log(
      `memory-ledger ${SERVICE_VERSION} listening on http://${info.address}:${info.port} (data: ${config.dataDir}, ${config.apiKeys ? 'hosted' : `open, tenant ${config.tenant}`}, ${link.role})`,
    );
    // Logged once it serves: a process refused the folder prints nothing but its one line on stderr.
    console.log(describeLimits(config.admission));
  });
  stopOnSignals(link, () => {
    server.close();
  });
  // A taken port is a set-up mistake, not a crash: one line saying what to change, no stack trace.
  server.once('error', (error: NodeJS.ErrnoException) => {
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
  });
}
