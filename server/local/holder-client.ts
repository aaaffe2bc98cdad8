// A forwarder's client for the holder's door: plain node:http over the unix socket (or loopback with the
// token), one keep-alive agent so a forwarded call costs no new connection.
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { HolderRecord } from './run-dir.ts';
import { TOKEN_HEADER } from './door-headers.ts';

export interface Envelope {
  method: string;
  /** Path and query, e.g. `/mcp` or `/v1/memories?as_of=...`. */
  path: string;
  headers: Record<string, string>;
  body: Buffer | null;
}

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** The holder cannot be reached (gone, going, or not yet there): the caller takes over or waits. */
export class HolderGoneError extends Error {}

const GONE = new Set(['ECONNREFUSED', 'ENOENT', 'ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ETIMEDOUT']);

export class HolderClient {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 32 });
  constructor(
    readonly record: HolderRecord,
    readonly token: string | null,
  ) {}

  send(envelope: Envelope, timeoutMs?: number): Promise<Answer> {
    const { socket, port } = this.record;
    const headers: Record<string, string> = { ...envelope.headers, host: 'localhost' };
    if (this.token) headers[TOKEN_HEADER] = this.token;
    if (envelope.body) headers['content-length'] = String(envelope.body.length);
    return new Promise<Answer>((resolve, reject) => {
      const req = httpRequest(
        {
          agent: this.#agent,
          method: envelope.method,
          path: envelope.path,
          headers,
          ...(socket ? { socketPath: socket } : { host: '127.0.0.1', port: port ?? 0 }),
        },
        (res) => {
          const chunks: Buffer[] = [];
          let ended = false;
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            ended = true;
            resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) });
          });
          res.on('error', (e) => reject(new HolderGoneError(e.message)));
          // A holder killed mid-answer cuts the response: the answer never came, so the call is retried.
          res.on('close', () => {
            if (!ended) reject(new HolderGoneError('the holder went mid-answer'));
          });
        },
      );
      if (timeoutMs) req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error('holder did not answer'), { code: 'ETIMEDOUT' })));
      req.on('error', (error: NodeJS.ErrnoException) => {
        const gone = GONE.has(error.code ?? '') || /socket hang up/.test(error.message);
        reject(gone ? new HolderGoneError(`${error.code ?? ''} ${error.message}`) : error);
      });
      req.end(envelope.body ?? undefined);
    });
  }

  /** The holder's version, or null when it does not answer. */
  async probe(): Promise<string | null> {
    try {
      const a = await this.send({ method: 'GET', path: '/v1/version', headers: {}, body: null }, 5_000);
      if (a.status !== 200) return null;
      const v = (JSON.parse(a.body.toString('utf8')) as { version?: unknown }).version;
      return typeof v === 'string' ? v : null;
    } catch {
      return null;
    }
  }

  close(): void {
    this.#agent.destroy();
  }
}
