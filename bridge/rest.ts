// The REST door: a thin adapter from HTTP to the operations. It reads path, query and body, calls
// `runOperation` with the caller's context, and writes the operation's JSON unchanged.
import type { Hono } from 'hono';
import { readBodyText } from '../server/request-body.ts';
import { errorAnswer, errorDetail, type Source } from '../tools/error-body.ts';
import { invalidInput, SvcError } from '../tools/errors.ts';
import type { Context } from '../tools/context.ts';
import { operationNamed } from '../tools/index.ts';
import { runOperation, unknownFieldIssue } from '../tools/operation.ts';
import { matchPath, routes } from './routes.ts';

export interface RestEnv {
  Variables: { ctx: Context };
}

async function readJsonBody(req: Request, maxBytes: number): Promise<unknown> {
  const body = await readBodyText(req, maxBytes);
  if (body.tooLarge) throw new SvcError('payload_too_large', `the body is larger than ${maxBytes} bytes`);
  return parseJsonBody(body.text);
}

/** A REST body's JSON; an empty body is `{}`. */
export function parseJsonBody(text: string): unknown {
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
export function queryObject(url: URL): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of url.searchParams) if (!(k in out)) out[k] = v;
  return out;
}

/** A body route reads nothing from the query, so any parameter there is refused rather than dropped. */
export function refuseQuery(url: URL): void {
  const keys = [...new Set(url.searchParams.keys())];
  if (keys.length > 0) throw invalidInput(keys.map((k) => ({ ...unknownFieldIssue(k, []), input: url.searchParams.get(k) })));
}

export function mountRest(app: Hono<RestEnv>, maxBodyBytes: number): void {
  app.delete('/v1/memories/*', (c) =>
    c.json(
      errorDetail(
        'append_only',
        'the ledger is append-only: nothing is ever deleted; write a new block and a SUPERSEDES edge instead, or retract it with POST /v1/memories/{id}/invalidate',
      ),
      501,
    ),
  );

  app.on(['GET', 'POST'], '/v1/*', async (c, next) => {
    const url = new URL(c.req.url);
    for (const route of routes) {
      if (route.method !== c.req.method) continue;
      const params = matchPath(route.path, url.pathname);
      if (!params) continue;
      const ctx = c.get('ctx');
      let from: Source = route.from;
      const sourceOf = (field: string | number | undefined): Source => (typeof field === 'string' && field in params ? 'path' : from);
      let input: unknown;
      try {
        const op = operationNamed(route.operation);
        if (route.from === 'body') {
          from = 'query';
          refuseQuery(url);
        }
        const raw = route.from === 'body' ? await readJsonBody(c.req.raw, maxBodyBytes) : queryObject(url);
        from = route.from;
        input = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? { ...(raw as Record<string, unknown>), ...params } : raw;
        const result = await runOperation(op, input, ctx);
        if (route.respond) return await route.respond(result, ctx);
        return c.json(result as object, 200);
      } catch (error) {
        const e = errorAnswer(error, sourceOf, input);
        if (e.retryAfter !== undefined) c.header('retry-after', String(e.retryAfter));
        return c.json(e.body, e.status as 400);
      }
    }
    return next();
  });
}
