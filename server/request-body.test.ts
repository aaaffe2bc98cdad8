import { describe, expect, it } from 'vitest';
import { readBodyText } from './request-body.ts';

const encoder = new TextEncoder();

/** A body without a declared length (as a chunked upload arrives), counting the chunks pulled from it. */
function chunked(chunks: string[]): { request: Request; pulled: () => number } {
  let next = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const chunk = chunks[next++];
        if (chunk === undefined) controller.close();
        else controller.enqueue(encoder.encode(chunk));
      },
      // Nothing pulled ahead of the reader, so `pulled` counts what was read.
    },
    { highWaterMark: 0 },
  );
  const request = new Request('http://ledger.test/x', { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
  return { request, pulled: () => next };
}

describe('readBodyText', () => {
  it('reads a body whose declared length is within the bound', async () => {
    const text = JSON.stringify({ say: 'héllo' });
    const request = new Request('http://ledger.test/x', {
      method: 'POST',
      headers: { 'content-length': String(encoder.encode(text).byteLength) },
      body: text,
    });
    expect(await readBodyText(request, 1024)).toEqual({ tooLarge: false, text });
  });

  it('refuses a declared length over the bound without reading the body', async () => {
    const { request, pulled } = chunked(['x'.repeat(10)]);
    request.headers.set('content-length', '2048');
    expect(await readBodyText(request, 1024)).toEqual({ tooLarge: true });
    expect(pulled()).toBe(0);
    expect(request.bodyUsed).toBe(false);
  });

  it('reads a chunked body within the bound whole, with characters cut between chunks', async () => {
    const bytes = encoder.encode('{"a":"é€"}');
    const slices = [bytes.slice(0, 7), bytes.slice(7, 9), bytes.slice(9)];
    let i = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        const s = slices[i++];
        if (s) c.enqueue(s);
        else c.close();
      },
    });
    const request = new Request('http://ledger.test/x', { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
    expect(await readBodyText(request, 1024)).toEqual({ tooLarge: false, text: '{"a":"é€"}' });
  });

  it('stops reading a chunked body as soon as it passes the bound', async () => {
    const { request, pulled } = chunked(Array.from({ length: 100 }, () => 'y'.repeat(400)));
    expect(await readBodyText(request, 1024)).toEqual({ tooLarge: true });
    // 400 bytes a chunk: the third passes 1,024; nothing after it is pulled.
    expect(pulled()).toBeLessThanOrEqual(4);
  });

  it('reads an absent body as empty text', async () => {
    expect(await readBodyText(new Request('http://ledger.test/x', { method: 'POST' }), 1024)).toEqual({ tooLarge: false, text: '' });
  });
});
