// The holder's door for the other local processes: the same Hono app (REST and MCP streamable HTTP)
// on a unix socket in the owner-only `local` folder, or on loopback behind a per-folder token when the
// socket path is too long. A forwarder says which tenant it acts for (`x-memory-ledger-tenant`): it
// already admitted the request at its own door, and only processes of this user can reach this one.
import { rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { Hono } from 'hono';
import type { RestEnv } from '../../bridge/rest.ts';
import type { Ledger } from '../../storage/ledger.ts';
import { createApp } from '../app.ts';
import type { Config } from '../config.ts';
import type { StartedServices } from '../services.ts';
import { ensureRunDir, newToken, socketPathFor } from './run-dir.ts';

export const TENANT_HEADER = 'x-memory-ledger-tenant';
export const TOKEN_HEADER = 'x-memory-ledger-token';

export interface Held {
  config: Config;
  ledger: Ledger;
  started: StartedServices;
}

export interface HolderDoor {
  socket: string | null;
  port: number | null;
  /** The open single-tenant app this process itself answers with (stdio's own door). */
  appFor(tenant: string): Hono<RestEnv>;
  close(): Promise<void>;
}

export async function openHolderDoor(held: Held): Promise<HolderDoor> {
  const apps = new Map<string, Hono<RestEnv>>();
  // Every app is the open local server for one tenant, on the one ledger and the one set of engines.
  const appFor = (tenant: string): Hono<RestEnv> => {
    let app = apps.get(tenant);
    if (!app) {
      const config: Config = { ...held.config, apiKeys: null, tenant, host: '127.0.0.1' };
      app = createApp({ config, ledger: held.ledger, services: held.started.services, checks: held.started.checks, mount: held.started.mount });
      apps.set(tenant, app);
    }
    return app;
  };
  const dataDir = held.config.dataDir;
  ensureRunDir(dataDir);
  const socket = socketPathFor(dataDir);
  const token = socket ? null : newToken(dataDir);

  const server = createAdaptorServer({
    fetch: (request: Request) => {
      if (token !== null && request.headers.get(TOKEN_HEADER) !== token) return Response.json({ detail: { error: 'SVC_UNAUTHORIZED' } }, { status: 401 });
      return appFor(request.headers.get(TENANT_HEADER) || held.config.tenant).fetch(request);
    },
  });
  // We hold the folder's lock, so a socket file left here is a dead holder's.
  if (socket) rmSync(socket, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if (socket) server.listen(socket, () => resolve());
    else server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = socket ? null : (server.address() as AddressInfo).port;

  return {
    socket,
    port,
    appFor,
    close: () => new Promise<void>((resolve) => {
      // In-flight requests finish; idle keep-alive connections are closed so forwarders notice at once.
      server.close(() => resolve());
      if ('closeIdleConnections' in server) server.closeIdleConnections();
      if (socket) rmSync(socket, { force: true });
    }),
  };
}
