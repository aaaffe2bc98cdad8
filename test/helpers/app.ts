// An in-process server on real stores in a fresh temporary folder: the Hono app is called with
// `app.request()`, no port. Each test file gets its own folder (Kuzu is not reopened in one process).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Hono } from 'hono';
import type { RestEnv } from '../../bridge/rest.ts';
import { createApp } from '../../server/app.ts';
import { readConfig, type Config } from '../../server/config.ts';
import { startServices, type StartedServices } from '../../server/services.ts';
import { Ledger } from '../../storage/log/ledger.ts';

export interface TestApp {
  app: Hono<RestEnv>;
  ledger: Ledger;
  config: Config;
  started: StartedServices;
  dir: string;
  /** JSON request; `key` sets the bearer token. */
  call(
    method: string,
    path: string,
    opts?: { body?: unknown; query?: Record<string, string | number | undefined>; key?: string; raw?: string },
  ): Promise<{ status: number; json: any; headers: Headers }>;
  close(): Promise<void>;
  /** Closes the server but keeps its folder (a restart opens it again with `startTestApp(env, dir)`). */
  stop(): Promise<void>;
}

export async function startTestApp(
  env: Record<string, string> = {},
  existing?: string,
  ledgerOptions: Parameters<typeof Ledger.open>[1] = {},
): Promise<TestApp> {
  const dir = existing ?? mkdtempSync(join(tmpdir(), 'ledger-test-'));
  // A loaded test machine can take longer than the default deadline to index a large write before a
  // search; deadlines are tested where a test sets one.
  const config = readConfig({ SVC_DATA_DIR: dir, SVC_EMBEDDER: 'local', SVC_EXTRACTOR: 'local', SVC_REQUEST_TIMEOUT_MS: '600000', ...env });
  const ledger = await Ledger.open(config.dataDir, ledgerOptions);
  const started = await startServices(config, ledger);
  const app = createApp({ config, ledger, services: started.services, checks: started.checks, mount: started.mount });
  return {
    app,
    ledger,
    config,
    started,
    dir,
    async call(method, path, opts = {}) {
      const url = new URL(`http://ledger.test${path}`);
      for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
      const headers: Record<string, string> = {};
      if (opts.key) headers.authorization = `Bearer ${opts.key}`;
      let body: string | undefined;
      if (opts.raw !== undefined) body = opts.raw;
      else if (opts.body !== undefined) body = JSON.stringify(opts.body);
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await app.request(url.toString(), { method, headers, body });
      const text = await res.text();
      let json: unknown = null;
      try {
        json = JSON.parse(text);
      } catch {
        json = text;
      }
      return { status: res.status, json, headers: res.headers };
    },
    async close() {
      await started.close();
      await ledger.close();
      rmSync(dir, { recursive: true, force: true });
    },
    async stop() {
      await started.close();
      await ledger.close();
    },
  };
}
