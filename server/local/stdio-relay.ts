// The stdio door of every local process, holder or forwarder alike: each JSON-RPC line from stdin is one
// POST to the MCP endpoint (in-process on the holder, through the holder's socket elsewhere) and each
// answer goes back as one line on stdout. The same path on both sides keeps a forwarder's answers
// byte-identical to the holder's. Calls run concurrently, as the SDK's stdio server runs them.
import { createInterface } from 'node:readline';
import { TENANT_HEADER } from './holder-door.ts';
import type { Envelope } from './holder-client.ts';
import type { LocalLink } from './link.ts';

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

/** The JSON-RPC messages in an answer body: one JSON object (JSON mode) or the `data:` lines of an SSE stream. */
function messagesOf(contentType: string, text: string): string[] {
  if (contentType.includes('text/event-stream')) {
    return text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).filter(Boolean);
  }
  const trimmed = text.trim();
  return trimmed ? [trimmed] : [];
}

export function relayStdio(link: LocalLink, tenant: string, onError: (message: string) => void): Relay {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', [TENANT_HEADER]: tenant };
  const pending = new Set<Promise<void>>();
  const write = (message: string): void => { process.stdout.write(`${message}\n`); };

  const relay = async (line: string): Promise<void> => {
    const envelope: Envelope = { method: 'POST', path: '/mcp', headers, body: Buffer.from(line) };
    try {
      const response = await link.answer(envelope, (h) => Promise.resolve(h.door.appFor(tenant).fetch(
        new Request('http://localhost/mcp', { method: 'POST', headers, body: line }),
      )));
      const text = await response.text();
      const messages = messagesOf(response.headers.get('content-type') ?? '', text);
      const rpc = messages.filter((m) => m.startsWith('{') || m.startsWith('['));
      for (const m of rpc) write(m);
      const id = idOf(line);
      if (rpc.length === 0 && id !== null && response.status >= 400) {
        write(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32603, message: `the ledger answered ${response.status}: ${text.slice(0, 200)}` } }));
      }
    } catch (error) {
      const message = (error as Error).message;
      onError(message);
      const id = idOf(line);
      if (id !== null) write(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32603, message: `memory-ledger: ${message}` } }));
    }
  };

  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  let resolveDrained: () => void = () => undefined;
  const drained = new Promise<void>((r) => { resolveDrained = r; });
  lines.on('line', (line) => {
    if (!line.trim()) return;
    const p = relay(line).finally(() => pending.delete(p));
    pending.add(p);
  });
  lines.once('close', () => {
    void Promise.all([...pending]).then(() => resolveDrained());
  });
  return { drained, close: () => lines.close() };
}
