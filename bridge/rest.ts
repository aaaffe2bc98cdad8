// The REST door: a thin adapter from HTTP to the operations. It reads path, query and body, calls
// `runOperation` with the caller's context, and writes the operation's JSON unchanged.
import type { Hono } from 'hono';
import { errorAnswer, errorDetail, type ErrorAnswer } from '../tools/error-body.ts';
import type { Context } from '../tools/context.ts';
import { operationNamed } from '../tools/index.ts';
import { runOperation } from '../tools/operation.ts';
import { matchPath } from './match-path.ts';
import { locateIn, readRestInput } from './rest-input.ts';
import { routes } from './routes.ts';

export interface RestEnv {
  Variables: { ctx: Context };
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
      const answerError = (e: ErrorAnswer): Response => {
        if (e.retryAfter !== undefined) c.header('retry-after', String(e.retryAfter));
        return c.json(e.body, e.status as 400);
      };
      const read = await readRestInput(c.req.raw, url, route, params, maxBodyBytes);
      if (!read.ok) return answerError(read.error);
      try {
        const result = await runOperation(operationNamed(route.operation), read.input, ctx);
        if (route.respond) return await route.respond(result, ctx);
        return c.json(result as object, 200);
      } catch (error) {
        return answerError(errorAnswer(error, locateIn(Object.keys(params), route.from), read.input));
      }
    }
    return next();
  });
}
