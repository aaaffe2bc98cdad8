// What an HTTP thread does not answer itself it sends on whole to the ledger thread's own listener on
// loopback: the same request (method, path, headers, Host included, so discovery and the docs name the
// public address) and the answer streamed back, exports and event streams included.
import { Agent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { errorDetail } from '../../tools/error-body.ts';

/** Headers about one hop of the connection, not the request: each side sets its own. */
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']);

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (!HOP.has(k)) out[k] = v;
  return out;
}

const NO_BODY = new Set([101, 204, 205, 304]);

export class PassOn {
  readonly #agent = new Agent({ keepAlive: true });

  constructor(readonly inner: { host: string; port: number }) {}

  #open(method: string, path: string, headers: IncomingHttpHeaders, onAnswer: (answer: IncomingMessage) => void) {
    return httpRequest(
      { host: this.inner.host, port: this.inner.port, method, path, headers: endToEnd(headers), agent: this.#agent },
      onAnswer,
    );
  }

  /** A request not yet read: its body is piped through as it comes. */
  raw(req: IncomingMessage, res: ServerResponse): void {
    const out = this.#open(req.method ?? 'GET', req.url ?? '/', req.headers, (answer) => {
      res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
      answer.pipe(res);
    });
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' }).end(BAD_GATEWAY);
      else res.destroy();
    });
    res.on('close', () => {
      if (!res.writableFinished) out.destroy();
    });
    req.pipe(out);
  }

  /**
   * A request this thread began to answer: `text` is its body when this thread has read it (to learn it
   * was not one to answer here); undefined, its body still to come, piped through as it comes.
   */
  read(request: Request, text?: string): Promise<Response> {
    const url = new URL(request.url);
    const headers: IncomingHttpHeaders = {};
    request.headers.forEach((value, key) => {
      headers[key] = value;
    });
    if (text !== undefined) headers['content-length'] = String(Buffer.byteLength(text));
    return new Promise((resolve) => {
      const out = this.#open(request.method, `${url.pathname}${url.search}`, headers, (answer) => {
        const status = answer.statusCode ?? 502;
        const h = new Headers();
        for (const [k, v] of Object.entries(endToEnd(answer.headers))) {
          if (Array.isArray(v)) for (const one of v) h.append(k, one);
          else if (v !== undefined) h.set(k, v);
        }
        const stream = NO_BODY.has(status) ? null : (Readable.toWeb(answer) as ReadableStream<Uint8Array>);
        if (stream === null) answer.resume();
        resolve(new Response(stream, { status, headers: h }));
      });
      out.on('error', () => resolve(new Response(BAD_GATEWAY, { status: 502, headers: { 'content-type': 'application/json' } })));
      request.signal.addEventListener('abort', () => out.destroy(), { once: true });
      if (text !== undefined || request.body === null) out.end(text);
      else Readable.fromWeb(request.body as import('node:stream/web').ReadableStream<Uint8Array>).pipe(out);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}

const BAD_GATEWAY = JSON.stringify(errorDetail('unavailable', "the server's ledger thread did not answer; retry"));
