// The holder's door for the other local processes, on a unix socket in the owner-only `local` folder, or
// on loopback behind a per-folder token when the socket path is too long: `POST /local/mcp` carries one
// JSON-RPC line of a forwarder's stdio session (`x-memory-ledger-session`), everything else goes to the
// same Hono app as `serve` (REST and MCP streamable HTTP). A forwarder says which tenant it acts for
// (`x-memory-ledger-tenant`): it admitted the request at its own door, and only processes of this user
// can reach this one.
import { chmodSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { Hono } from 'hono';
import type { RestEnv } from '../../bridge/rest.ts';
import type { Ledger } from '../../storage/log/ledger.ts';
import type { Context } from '../../tools/context.ts';
import { createApp } from '../app.ts';
import type { Config } from '../config.ts';
import { createLedgerMcpServer } from '../mcp/tools.ts';
import type { StartedServices } from '../services.ts';
import { SESSION_HEADER, SESSION_PATH, TENANT_HEADER, TOKEN_HEADER } from './door-headers.ts';
import { McpSession } from './mcp-session.ts';
import { ensureRunDir, newToken, socketPathFor } from './run-dir.ts';

/** A forwarder that vanished without saying goodbye leaves its session; it goes after this long idle. */
const SESSION_IDLE_MS = 30 * 60_000;

export interface Held {
  config: Config;
  ledger: Ledger;
  started: StartedServices;
}

export interface HolderDoor {
  socket: string | null;
  port: number | null;
  /** The open single-tenant app for one tenant (a forwarding serve's requests after a takeover). */
  appFor(tenant: string): Hono<RestEnv>;
  /** A stdio session in this process (the holder's own stdio); `other` gets unsolicited messages. */
  openSession(tenant: string, other: (line: string) => void): McpSession;
  close(): Promise<void>;
}

export async function openHolderDoor(held: Held): Promise<HolderDoor> {
  const apps = new Map<string, Hono<RestEnv>>();
  // Every app is the open local server for one tenant, on the one ledger and the one set of engines.
  const appFor = (tenant: string): Hono<RestEnv> => {
    let app = apps.get(tenant);
    if (!app) {
      const config: Config = { ...held.config, apiKeys: null, tenant, host: '127.0.0.1' };
      app = createApp({
        config,
        ledger: held.ledger,
        services: held.started.services,
        checks: held.started.checks,
        mount: held.started.mount,
      });
      apps.set(tenant, app);
    }
    return app;
  };
  const onError = (m: string): void => console.error('mcp stdio:', m);
  const openSession = (tenant: string, other: (line: string) => void): McpSession => {
    const ctx: Context = { ledger: held.ledger, tenant, services: held.started.services };
    return new McpSession(() => createLedgerMcpServer(ctx), other, onError);
  };
  // Forwarders' sessions; what the server says unasked (notifications) has nowhere to go and is dropped.
  const sessions = new Map<string, McpSession>();
  const sweep = setInterval(() => {
    for (const [id, session] of sessions)
      if (Date.now() - session.lastUsed > SESSION_IDLE_MS) {
        sessions.delete(id);
        void session.close();
      }
  }, 60_000);
  sweep.unref();
  const relay = async (request: Request): Promise<Response> => {
    const id = request.headers.get(SESSION_HEADER);
    if (!id) return Response.json({ detail: { error: 'invalid_input', why: `${SESSION_HEADER} is required` } }, { status: 400 });
    if (request.method === 'DELETE') {
      await sessions.get(id)?.close();
      sessions.delete(id);
      return new Response(null, { status: 204 });
    }
    let session = sessions.get(id);
    if (!session) {
      session = openSession(request.headers.get(TENANT_HEADER) || held.config.tenant, () => undefined);
      sessions.set(id, session);
    }
    const answer = await session.deliver(await request.text());
    return answer === null
      ? new Response(null, { status: 202 })
      : new Response(answer, { headers: { 'content-type': 'application/json' } });
  };

  const dataDir = held.config.dataDir;
  ensureRunDir(dataDir);
  const socket = socketPathFor(dataDir);
  const token = socket ? null : newToken(dataDir);

  const server = createAdaptorServer({
    fetch: (request: Request) => {
      if (token !== null && request.headers.get(TOKEN_HEADER) !== token)
        return Response.json({ detail: { error: 'SVC_UNAUTHORIZED' } }, { status: 401 });
      if (new URL(request.url).pathname === SESSION_PATH) return relay(request);
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
  // The folder already keeps others out; the socket's own mode says the same to anyone who looks.
  if (socket) chmodSync(socket, 0o600);
  const port = socket ? null : (server.address() as AddressInfo).port;

  return {
    socket,
    port,
    appFor,
    openSession,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(sweep);
        // In-flight requests finish (their sessions still answer); idle keep-alive connections are closed so
        // forwarders notice at once.
        server.close(() => {
          for (const session of sessions.values()) void session.close();
          sessions.clear();
          resolve();
        });
        if ('closeIdleConnections' in server) server.closeIdleConnections();
        if (socket) rmSync(socket, { force: true });
      }),
  };
}
