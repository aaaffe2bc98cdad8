// `memory-ledger stdio`: the same tools over stdin/stdout for a local agent, on SVC_DATA_DIR, as the open
// single-tenant server (SVC_TENANT). stdout carries protocol messages only, so every log goes to stderr.
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { Ledger } from '../../storage/ledger.ts';
import type { Context } from '../../tools/context.ts';
import { readConfig } from '../config.ts';
import { startServices } from '../services.ts';
import { gracefulStop } from '../shutdown.ts';
import { SERVICE_VERSION } from '../version.ts';
import { createLedgerMcpServer } from './tools.ts';

/** Sends console output meant for stdout to stderr: one stray line on stdout would break the protocol. */
function keepStdoutForProtocol(): void {
  const toStderr = (...args: unknown[]): void => console.error(...args);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
  console.warn = toStderr;
}

export async function runStdio(): Promise<void> {
  keepStdoutForProtocol();
  process.env.LANCEDB_LOG ??= 'error';
  const config = readConfig();
  const ledger = await Ledger.open(config.dataDir);
  const started = await startServices(config, ledger);
  const ctx: Context = { ledger, tenant: config.tenant, services: started.services };
  const handle = serveStdio(() => createLedgerMcpServer(ctx), {
    onerror: (error) => console.error('mcp stdio:', error.message),
  });
  console.error(`memory-ledger ${SERVICE_VERSION} serving MCP over stdio (data: ${config.dataDir}, tenant ${config.tenant})`);

  const stop = gracefulStop({
    log: (m) => console.error(m), closeDoor: () => handle.close().catch(() => undefined), started, ledger,
  });
  // The client closing our stdin ends the session: let queued writes commit, then close the stores.
  process.stdin.once('end', () => void stop('stdin closed'));
  process.stdin.once('close', () => void stop('stdin closed'));
}
