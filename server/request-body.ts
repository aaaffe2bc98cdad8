// A request body read within the server's bound (SVC_MAX_BODY_BYTES), for every door that takes one: REST,
// MCP over HTTP and the admin import.

export type BodyText = { tooLarge: true } | { tooLarge: false; text: string };

/**
 * The body as text, never holding more than `maxBytes` of it. A declared length over the bound is refused
 * before anything is read; within it the body is read in one piece, which behind @hono/node-server reads the
 * socket directly (Node's parser never hands on more than the declared length). The SDK's `readRequestBody`
 * reads through a web stream built over the socket, which cost about a fifth of a small MCP `tools/call`'s
 * CPU (measured with the load bench); it is kept for a body without a declared length (chunked), which it
 * reads as it comes and refuses as soon as it passes the bound. It is imported then: the HTTP threads
 * (server/fronts/) read bodies here and load nothing else of the SDK.
 */
export async function readBodyText(request: Request, maxBytes: number): Promise<BodyText> {
  const declared = request.headers.get('content-length');
  if (declared === null || !/^\d+$/.test(declared)) {
    const { readRequestBody } = await import('@modelcontextprotocol/server');
    return readRequestBody(request, maxBytes);
  }
  if (Number(declared) > maxBytes) return { tooLarge: true };
  return { tooLarge: false, text: await request.text() };
}
