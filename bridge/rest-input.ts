// A REST request's raw input, read as the REST door (./rest.ts) and the HTTP threads (server/fronts/) take
// it. Nothing here loads the operations: a thread reads inputs, the ledger thread validates them.
import { readBodyText } from '../server/request-body.ts';
import { errorAnswer, type ErrorAnswer, type Locator, type Source } from '../tools/error-body.ts';
import { invalidInput, SvcError } from '../tools/errors.ts';
import { unknownFieldIssue } from '../tools/unknown-field.ts';

/** A REST body's JSON; an empty body is `{}`. */
function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new SvcError('invalid_json', `the body is not valid JSON: ${(error as Error).message.slice(0, 200)}`);
  }
}

/**
 * The query parameters, the first of each. All of them go to the operation's schema, which refuses one it
 * does not take: a mistyped `?spcae=` must not silently widen a read to the whole tenant.
 */
function queryObject(url: URL): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of url.searchParams) if (!(k in out)) out[k] = v;
  return out;
}

/** A body route reads nothing from the query, so any parameter there is refused rather than dropped. */
function refuseQuery(url: URL): void {
  const keys = [...new Set(url.searchParams.keys())];
  if (keys.length > 0) throw invalidInput(keys.map((k) => ({ ...unknownFieldIssue(k, []), input: url.searchParams.get(k) })));
}

/** Where an error about a field is located: a field of the path in the path, any other where the route takes it from. */
export function locateIn(pathFields: Iterable<string>, from: Source): Locator {
  const inPath = new Set(pathFields);
  return (field) => (typeof field === 'string' && inPath.has(field) ? 'path' : from);
}

/** A route's raw input, and its body's text when it has one; or the answer to a request whose input cannot be read. */
export type RestInput = { ok: true; input: unknown; text: string | null } | { ok: false; error: ErrorAnswer };

/**
 * Reads a route's raw input as the REST door takes it, for the door and for the HTTP threads
 * (server/fronts/): the query, or the JSON body of a body route (which refuses any query parameter),
 * with the path's fields over it. Validation is `runOperation`'s.
 */
export async function readRestInput(
  request: Request,
  url: URL,
  route: { from: Source },
  params: Record<string, string>,
  maxBodyBytes: number,
): Promise<RestInput> {
  let from: Source = route.from;
  try {
    let text: string | null = null;
    if (route.from === 'body') {
      from = 'query';
      refuseQuery(url);
      const body = await readBodyText(request, maxBodyBytes);
      if (body.tooLarge) throw new SvcError('payload_too_large', `the body is larger than ${maxBodyBytes} bytes`);
      text = body.text;
    }
    const raw = text !== null ? parseJsonBody(text) : queryObject(url);
    const input = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? { ...(raw as Record<string, unknown>), ...params } : raw;
    return { ok: true, input, text };
  } catch (error) {
    return { ok: false, error: errorAnswer(error, locateIn(Object.keys(params), from)) };
  }
}
