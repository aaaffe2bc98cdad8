// One MCP stdio session held in the holder: the SDK's own stdio serving (`serveStdio`, with its era
// negotiation) over a wire that takes JSON-RPC lines from a caller instead of stdin. The holder's own
// stdio and every forwarder's stdio get one each, so a forwarder's answers are the very lines the
// holder's stdio would write (JSON.stringify of the same message).
import { parseJSONRPCMessage, type JSONRPCMessage, type McpServer, type Transport } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

type Id = string | number;

class LineWire implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;
  constructor(private readonly out: (message: JSONRPCMessage) => void) {}
  async start(): Promise<void> {}
  async send(message: JSONRPCMessage): Promise<void> {
    this.out(message);
  }
  async close(): Promise<void> {
    this.onclose?.();
  }
  deliver(message: JSONRPCMessage): void {
    this.onmessage?.(message);
  }
}

const idOf = (m: unknown): Id | null => {
  const id = (m as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
};
const isResponse = (m: JSONRPCMessage): boolean => !('method' in m) && idOf(m) !== null;

export class McpSession {
  readonly #wire: LineWire;
  readonly #handle: { close(): Promise<void> };
  readonly #pending = new Map<Id, (line: string) => void>();
  lastUsed = Date.now();

  /** `other`: messages that answer no request of ours (notifications, server requests), as lines. */
  constructor(factory: () => McpServer, other: (line: string) => void, onError: (message: string) => void) {
    this.#wire = new LineWire((message) => {
      const line = JSON.stringify(message);
      const id = idOf(message);
      const waiting = id !== null && isResponse(message) ? this.#pending.get(id) : undefined;
      if (waiting && id !== null) {
        this.#pending.delete(id);
        waiting(line);
      } else {
        other(line);
      }
    });
    this.#handle = serveStdio(() => factory(), { transport: this.#wire, onerror: (e) => onError(e.message) });
  }

  /** Hands one line to the session; resolves with the answer's line for a request, null otherwise. */
  deliver(line: string): Promise<string | null> {
    this.lastUsed = Date.now();
    let message: JSONRPCMessage;
    try {
      message = parseJSONRPCMessage(JSON.parse(line));
    } catch {
      return Promise.resolve(
        JSON.stringify({
          jsonrpc: '2.0',
          id: idOf(safeParse(line)),
          error: { code: -32700, message: 'Parse error: not a JSON-RPC message' },
        }),
      );
    }
    const id = idOf(message);
    if (id === null || !('method' in message)) {
      this.#wire.deliver(message);
      return Promise.resolve(null);
    }
    const answered = new Promise<string>((resolve) => this.#pending.set(id, resolve));
    this.#wire.deliver(message);
    return answered;
  }

  async close(): Promise<void> {
    for (const [id, resolve] of this.#pending)
      resolve(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32603, message: 'the session closed before answering' } }));
    this.#pending.clear();
    await this.#handle.close().catch(() => undefined);
  }
}

function safeParse(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return null;
  }
}
