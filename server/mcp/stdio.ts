// `memory-ledger stdio`: the same tools over stdin/stdout for a local agent, on SVC_DATA_DIR, as the open
// single-tenant server (SVC_TENANT). Many of these (one per editor window) and one `serve` may share a
// folder: the first holds the ledger and the others forward to it (server/local/). stdout carries
// protocol messages only, so every log goes to stderr.
import { readConfig } from '../config.ts';
import { applyHeapGrowth } from '../heap-growth.ts';
import { FolderHeldError } from '../local/folder-held.ts';
import { LocalLink, stopOnSignals } from '../local/link.ts';
import { relayStdio } from '../local/stdio-relay.ts';
import { SERVICE_VERSION } from '../version.ts';

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
  // The first stdio process on a folder holds the ledger as `serve` does: the same heap bound.
  applyHeapGrowth(config.heapGrowthPercent);
  const log = (m: string): void => console.error(m);
  let link: LocalLink;
  try {
    link = await LocalLink.open(config, 'stdio', log);
  } catch (error) {
    if (!(error instanceof FolderHeldError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
  const relay = relayStdio(link, config.tenant, (m) => console.error('mcp stdio:', m));
  console.error(`memory-ledger ${SERVICE_VERSION} serving MCP over stdio (data: ${config.dataDir}, tenant ${config.tenant}, ${link.role})`);

  const stop = stopOnSignals(link, () => relay.close());
  // The client closing our stdin ends the session: answer what was read, then hand the folder over.
  void relay.drained.then(() => stop('stdin closed'));
}
