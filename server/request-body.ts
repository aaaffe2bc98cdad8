// A request body read within the server's bound (SVC_MAX_BODY_BYTES), for every door that takes one: REST,
// MCP over HTTP and the admin import.

export type BodyText = { tooLarge: true } | { tooLarge: false; text: string };

/**
 * The body as text, never holding more than `maxBytes` of it. A declared length over the bound is refused
 * before anything is read; within it the body is read in one piece, which behind @hono/node-server reads the
 * socket directly (Node's parser never hands on more than the declared length). A web stream built over the
 * socket instead cost about a fifth of a small MCP `tools/call`'s CPU (measured with the load bench). A body
 * without a declared length (chunked) is read as it comes and refused as soon as it passes the bound.
 */
export async function readBodyText(request: Request, maxBytes: number): Promise<BodyText> {
  const declared = request.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared)) {
    if (Number(declared) > maxBytes) return { tooLarge: true };
    return { tooLarge: false, text: await request.text() };
  }
  if (request.body === null) return { tooLarge: false, text: '' };
  const reader = request.body.getReader();
  const decoder = new TextDecoder();
  let received = 0;
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      received += value.byteLength;
      if (received > maxBytes) {
        void reader.cancel().catch(() => undefined);
        return { tooLarge: true };
      }
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    reader.releaseLock();
  }
  return { tooLarge: false, text: text + decoder.decode() };
}
