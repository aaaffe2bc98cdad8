// The engines besides the ledger that a server runs (search index, embedder, extractor, MCP door), and
// the checks they add to check_install. One place wires them for `serve`, `stdio` and the tests.
import type { Hono } from 'hono';
import type { RestEnv } from '../bridge/rest.ts';
import type { Ledger } from '../storage/log/ledger.ts';
import type { Services } from '../tools/context.ts';
import type { AppDeps } from './app.ts';
import type { CheckProvider } from './checks.ts';
import type { Config } from './config.ts';
import { mountMcp } from './mcp/http.ts';
import { keepIndexThreadsLow } from '../storage/search/lance/index-priority.ts';
import { startSearch } from '../storage/search/start.ts';
import { SERVICE_VERSION } from './version.ts';
import { createExtractor } from '../extract/create.ts';
import { Admission } from '../tools/admission.ts';

export interface StartedServices {
  services: Services;
  checks: CheckProvider[];
  mount?: (app: Hono<RestEnv>, deps: AppDeps) => void;
  close(): Promise<void>;
}

/** Starts them while `ledger` opens; when it fails to open, closes what it opened and throws that failure. */
export async function startServices(config: Config, ledger: Ledger | Promise<Ledger>): Promise<StartedServices> {
  const search = await startSearch(
    { dataDir: config.dataDir, embedder: config.embedder, openaiBaseUrl: config.openaiBaseUrl, openaiApiKey: config.openaiApiKey },
    Promise.resolve(ledger),
  );
  const extraction = await createExtractor(config);
  const stopNice = search.index ? keepIndexThreadsLow(config.indexNice) : () => undefined;
  return {
    services: {
      version: SERVICE_VERSION,
      search: search.index ?? undefined,
      extractor: extraction.extractor,
      admission: new Admission(config.admission),
    },
    checks: [...search.checks, () => ({ name: 'extractor', ok: true, detail: extraction.detail })],
    mount: mountMcp,
    close: async () => {
      stopNice();
      await search.index?.close();
    },
  };
}
