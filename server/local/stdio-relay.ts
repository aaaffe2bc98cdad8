// The stdio door of every local process, holder or forwarder alike: each JSON-RPC line from stdin goes
// to this process's MCP session (in-process on the holder, `POST /local/mcp` on the holder's door
// elsewhere) and each answer goes back as one line on stdout. A session lives in whichever process holds
// the folder; after a takeover the new holder opens a fresh one on the next line. Calls run concurrently,
// as the SDK's stdio server runs them.
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { SESSION_HEADER, SESSION_PATH, TENANT_HEADER } from './door-headers.ts';
import type { HolderClient } from './holder-client.ts';
import type { Holding, LocalLink } from './link.ts';
import type { McpSession } from './mcp-session.ts';

export interface Relay {
  /** Resolves when stdin has ended and every call read from it has been answered. */
  drained: Promise<void>;
  /** Stops reading stdin. */
  close(): void;
}

const idOf = (line: string): string | number | null => {
  try {
    const id = (JSON.parse(line) as { id?: unknown }).id;
    return typeof id === 'string' || typeof id === 'number' ? id : null;
  } catch {
    return null;
  }
};

export function relayStdio(link: LocalLink, tenant: string, onError: (message: string) => void): Relay {
  const session = randomUUID();
  const headers = { 'content-type': 'application/json', [TENANT_HEADER]: tenant, [SESSION_HEADER]: session };
  const write = (line: string): void => {
    process.stdout.write(`${line}\n`);
  };
  let own: { holding: Holding; session: McpSession } | null = null;
  let lastRemote: HolderClient | null = null;

  const remote = async (holder: HolderClient, line: string): Promise<string | null> => {
    lastRemote = holder;
    const a = await holder.send({ method: 'POST', path: SESSION_PATH, headers, body: Buffer.from(line) });
    const text = a.body.toString('utf8').trim();
    if (a.status >= 400) throw new Error(`the holder answered ${a.status}: ${text.slice(0, 200)}`);
    return text || null;
  };
  const local = (holding: Holding, line: string): Promise<string | null> => {
    if (own?.holding !== holding) own = { holding, session: holding.door.openSession(tenant, write) };
    return own.session.deliver(line);
  };

  const relay = async (line: string): Promise<void> => {
    try {
      const answer = await link.answer(
        (holder) => remote(holder, line),
        (holding) => local(holding, line),
      );
      if (answer !== null) write(answer);
    } catch (error) {
      const message = (error as Error).message;
      onError(message);
      const id = idOf(line);
      if (id !== null) write(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32603, message: `memory-ledger: ${message}` } }));
    }
  };

  const pending = new Set<Promise<void>>();
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  let resolveDrained: () => void = () => undefined;
  const drained = new Promise<void>((r) => {
    resolveDrained = r;
  });
  lines.on('line', (line) => {
    if (!line.trim()) return;
    const p = relay(line).finally(() => pending.delete(p));
    pending.add(p);
  });
  lines.once('close', () => {
    void Promise.all([...pending]).then(async () => {
      // Tell the holder this session is over (best effort: it also forgets idle sessions).
      const holder: HolderClient | null = lastRemote;
      if (holder && !link.holding)
        await holder.send({ method: 'DELETE', path: SESSION_PATH, headers, body: null }, 1_000).catch(() => undefined);
      resolveDrained();
    });
  });
  return { drained, close: () => lines.close() };
}
