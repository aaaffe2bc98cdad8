// The operator routes under /admin: an exact copy of one tenant between servers (export page by page,
// import, digest) and the deletion of a partial copy. Behind SVC_OPERATOR_KEY only, never a tenant key:
// without it the routes do not exist (404); a tenant's key gets 403, any other 401.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Hono, MiddlewareHandler } from 'hono';
import type { z } from 'zod';
import { readBodyText } from './request-body.ts';
import type { RestEnv } from '../bridge/rest.ts';
import type { Ledger } from '../storage/log/ledger.ts';
import { exportPage, ImportConflict, importTenantRows, rowName, tenantDigest } from '../storage/log/tenant-copy.ts';
import {
  DEFAULT_LIMIT,
  type DeleteResultSchema,
  type DigestSchema,
  type ExportPageSchema,
  ImportBodySchema,
  type ImportConflictBodySchema,
  type ImportResultSchema,
  MAX_LIMIT,
} from './admin-schemas.ts';
import { bearerToken } from './auth.ts';

export interface AdminDeps {
  ledger: Ledger;
  operatorKey: string | null;
  /** Whether a presented key is some tenant's (then the answer is 403, not 401). */
  isTenantKey: (authorization: string | undefined) => boolean;
  maxBodyBytes: number;
  /**
   * Whether this server serves the tenant now (placed here, frozen here, or placements unknown): its rows
   * may not be deleted. Null without placement: a DELETE then needs `?force=true`.
   */
  servesTenant: ((tenant: string) => boolean) | null;
}

const digestOf = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

const errorDetail = (error: string, why: string) => ({ detail: { error, why } });

const bad = (field: string, why: string) => ({ detail: { error: 'invalid_input', why: `${field}: ${why}`, loc: ['query', field] } });

/** A whole number from the query, or the fallback when absent; a string naming the problem when bad. */
function queryInt(value: string | undefined, fallback: number, min: number, max: number): number | string {
  if (value === undefined || value === '') return fallback;
  if (!/^\d{1,16}$/.test(value)) return `expected a whole number, got ${JSON.stringify(value.slice(0, 40))}`;
  const n = Number(value);
  if (n < min || n > max) return `expected ${min} to ${max}, got ${n}`;
  return n;
}

/** How long a DELETE of a tenant waits for the deletion before answering 202 (wait_ms), and its bound. */
const DROP_WAIT_MS = 5_000;
const MAX_DROP_WAIT_MS = 60_000;

/** 409 for a tenant whose rows here are being deleted: no copy of it may be read or written meanwhile. */
const dropping = (tenant: string) =>
  errorDetail(
    'conflict',
    `tenant ${tenant}'s rows on this server are being deleted: DELETE /admin/tenants/${tenant} answers how far, and 200 once done`,
  );

export function mountAdmin(app: Hono<RestEnv>, deps: AdminDeps): void {
  const operator = deps.operatorKey === null ? null : digestOf(deps.operatorKey);
  const guard: MiddlewareHandler<RestEnv> = async (c, next) => {
    if (operator === null) return c.json(errorDetail('not_found', `no route ${c.req.method} ${new URL(c.req.url).pathname}`), 404);
    const authorization = c.req.header('authorization');
    const token = bearerToken(authorization);
    if (token !== null && timingSafeEqual(digestOf(token), operator)) return next();
    if (token !== null && deps.isTenantKey(authorization))
      return c.json(errorDetail('forbidden', 'the /admin routes take the operator key (SVC_OPERATOR_KEY), never a tenant key'), 403);
    return c.json(
      errorDetail('SVC_UNAUTHORIZED', 'the /admin routes need the operator key: Authorization: Bearer <SVC_OPERATOR_KEY>'),
      401,
    );
  };
  app.use('/admin/*', guard);
  app.use('/admin', guard);

  app.get('/admin/tenants/:tenant/rows', async (c) => {
    const tenant = c.req.param('tenant');
    if (deps.ledger.isDropping(tenant)) return c.json(dropping(tenant), 409);
    const after = queryInt(c.req.query('after'), 0, 0, Number.MAX_SAFE_INTEGER);
    if (typeof after === 'string') return c.json(bad('after', after), 422);
    const limit = queryInt(c.req.query('limit'), DEFAULT_LIMIT, 1, MAX_LIMIT);
    if (typeof limit === 'string') return c.json(bad('limit', limit), 422);
    const page: z.infer<typeof ExportPageSchema> = await exportPage(deps.ledger, tenant, after, limit);
    return c.json(page);
  });

  app.get('/admin/tenants/:tenant/digest', async (c) => {
    const tenant = c.req.param('tenant');
    if (deps.ledger.isDropping(tenant)) return c.json(dropping(tenant), 409);
    const upTo = queryInt(c.req.query('up_to'), Number.POSITIVE_INFINITY, 0, Number.MAX_SAFE_INTEGER);
    if (typeof upTo === 'string') return c.json(bad('up_to', upTo), 422);
    const after = queryInt(c.req.query('after'), 0, 0, Number.MAX_SAFE_INTEGER);
    if (typeof after === 'string') return c.json(bad('after', after), 422);
    const digest: z.infer<typeof DigestSchema> = await tenantDigest(deps.ledger, tenant, upTo, after);
    return c.json(digest);
  });

  app.post('/admin/tenants/:tenant/rows', async (c) => {
    const tenant = c.req.param('tenant');
    if (deps.ledger.isDropping(tenant)) return c.json(dropping(tenant), 409);
    const body = await readBodyText(c.req.raw, deps.maxBodyBytes);
    if (body.tooLarge)
      return c.json(
        errorDetail('payload_too_large', `the body is larger than ${deps.maxBodyBytes} bytes (SVC_MAX_BODY_BYTES): send fewer rows a call`),
        413,
      );
    let raw: unknown;
    try {
      raw = JSON.parse(body.text);
    } catch (error) {
      return c.json(errorDetail('invalid_json', `the body is not valid JSON: ${(error as Error).message.slice(0, 200)}`), 400);
    }
    const parsed = ImportBodySchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const loc = ['body', ...(issue?.path ?? []).map((p) => (typeof p === 'symbol' ? String(p) : p))];
      return c.json(
        {
          detail: {
            error: 'invalid_input',
            why: `${loc.join('.')}: ${issue?.message ?? 'invalid'}; send rows as GET .../rows answers them`,
            loc,
          },
        },
        422,
      );
    }
    const stray = parsed.data.rows.findIndex((r) => r.tenant !== tenant);
    if (stray >= 0)
      return c.json(
        {
          detail: {
            error: 'invalid_input',
            why: `body.rows.${stray}.tenant: ${JSON.stringify(parsed.data.rows[stray]?.tenant)} is not the tenant of the path (${JSON.stringify(tenant)})`,
            loc: ['body', 'rows', stray, 'tenant'],
          },
        },
        422,
      );
    try {
      const result: z.infer<typeof ImportResultSchema> = await importTenantRows(deps.ledger, tenant, parsed.data.rows);
      return c.json(result);
    } catch (error) {
      if (!(error instanceof ImportConflict)) throw error;
      const body: z.infer<typeof ImportConflictBodySchema> = {
        detail: { error: 'conflict', why: error.message, row: rowName(error.row), tseq: error.row.tseq },
      };
      return c.json(body, 409);
    }
  });

  app.delete('/admin/tenants/:tenant', async (c) => {
    const tenant = c.req.param('tenant');
    const force = c.req.query('force') === 'true';
    if (deps.servesTenant === null ? !force : deps.servesTenant(tenant))
      return c.json(
        errorDetail(
          'conflict',
          deps.servesTenant === null
            ? `this server has no placement (SVC_ETCD unset), so it serves every tenant: add ?force=true to delete tenant ${tenant}'s rows anyway`
            : `tenant ${tenant} is served by this server (placed or frozen here, not placed at all, or placements unknown now): only a copy on a server the tenant is placed away from can be deleted`,
        ),
        409,
      );
    const wait = queryInt(c.req.query('wait_ms'), DROP_WAIT_MS, 0, MAX_DROP_WAIT_MS);
    if (typeof wait === 'string') return c.json(bad('wait_ms', wait), 422);
    // Started (or joined) and left running: a large tenant takes longer than an HTTP call should wait, and
    // the tenant is refused here meanwhile, so nothing depends on the answer but the operator's view.
    const finished = deps.ledger.dropTenant(tenant);
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      finished.then((counts) => ({ counts })),
      new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), wait);
      }),
    ]).finally(() => clearTimeout(timer));
    if (outcome === null) {
      // Its failure, if it fails later, is logged; the next DELETE runs it again from where it stopped.
      finished.catch((error: unknown) => console.error(`deleting tenant ${tenant}'s rows failed (DELETE again to go on):`, error));
      const answer: z.infer<typeof DeleteResultSchema> = { tenant, deleted: deps.ledger.dropProgress(tenant)?.deleted ?? 0, done: false };
      c.header('retry-after', '1');
      return c.json(answer, 202);
    }
    const answer: z.infer<typeof DeleteResultSchema> = {
      tenant,
      deleted: Object.values(outcome.counts).reduce((a, b) => a + b, 0),
      done: true,
    };
    return c.json(answer);
  });
}
