// The operator routes of one server, as `memory-ledger move` calls them: a tenant's rows page by page in
// tseq order, storing rows verbatim, the digest of a copy, dropping a copy, and the server's view of a
// placement. Answers are checked against their shapes; a refused connection, a 502/503/504 or a timeout
// is retried for a bounded time (a server restarting, or busy), anything else fails at once.
import { z } from 'zod';
import { DeleteResultSchema, DigestSchema, ExportPageSchema, ImportResultSchema, PlacementStatusSchema } from '../admin-schemas.ts';

/** A row as the export route gives it: its table and its columns, carried verbatim and never read here. */
const RowSchema = z.record(z.string(), z.unknown());
export type TenantRow = z.infer<typeof RowSchema>;

// The routes' own answer shapes (server/admin-schemas.ts), but rows are passed on unread: the target checks them.
const PageSchema = ExportPageSchema.extend({ rows: z.array(RowSchema) });
export type RowsPage = z.infer<typeof PageSchema>;

const StoredSchema = ImportResultSchema;
export type Stored = z.infer<typeof StoredSchema>;

export type Digest = z.infer<typeof DigestSchema>;

export type Dropped = z.infer<typeof DeleteResultSchema>;

const StatusSchema = PlacementStatusSchema;
export type ServerView = z.infer<typeof StatusSchema>;

export class OperatorError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

export interface OperatorClientOptions {
  operatorKey: string;
  /** How long a call keeps retrying a server that does not answer or answers 502/503/504. */
  retryMs?: number;
  /** One attempt's bound. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

const RETRYABLE = new Set([502, 503, 504]);

export class OperatorClient {
  readonly #opts: Required<Omit<OperatorClientOptions, 'signal'>> & { signal?: AbortSignal };

  constructor(opts: OperatorClientOptions) {
    this.#opts = { retryMs: 10_000, timeoutMs: 60_000, ...opts };
  }

  async #call<T>(base: string, method: string, path: string, schema: z.ZodType<T>, body?: unknown): Promise<T> {
    const deadline = Date.now() + this.#opts.retryMs;
    let wait = 100;
    for (;;) {
      this.#opts.signal?.throwIfAborted();
      let failure: OperatorError;
      try {
        const signals = [AbortSignal.timeout(this.#opts.timeoutMs), ...(this.#opts.signal ? [this.#opts.signal] : [])];
        const res = await fetch(`${base}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${this.#opts.operatorKey}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.any(signals),
        });
        const text = await res.text();
        if (res.ok) {
          const parsed = schema.safeParse(JSON.parse(text));
          if (!parsed.success)
            throw new OperatorError(`${method} ${base}${path}: unexpected answer (${parsed.error.message.slice(0, 200)})`, res.status);
          return parsed.data;
        }
        failure = new OperatorError(`${method} ${base}${path}: ${res.status} ${text.slice(0, 300)}`, res.status);
        if (!RETRYABLE.has(res.status)) throw failure;
      } catch (error) {
        if (error instanceof OperatorError && !RETRYABLE.has(error.status ?? 0)) throw error;
        if (this.#opts.signal?.aborted) throw this.#opts.signal.reason;
        failure =
          error instanceof OperatorError
            ? error
            : new OperatorError(
                `${method} ${base}${path}: ${(error as Error).cause ? String((error as Error).cause) : (error as Error).message}`,
                null,
              );
      }
      if (Date.now() + wait > deadline) throw failure;
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 2, 1_000);
    }
  }

  rows(base: string, tenant: string, after: number, limit: number): Promise<RowsPage> {
    return this.#call(base, 'GET', `/admin/tenants/${encodeURIComponent(tenant)}/rows?after=${after}&limit=${limit}`, PageSchema);
  }

  store(base: string, tenant: string, rows: TenantRow[]): Promise<Stored> {
    return this.#call(base, 'POST', `/admin/tenants/${encodeURIComponent(tenant)}/rows`, StoredSchema, { rows });
  }

  /** The digest of the rows with `after` < tseq <= `upTo`. */
  digest(base: string, tenant: string, upTo: number, after = 0): Promise<Digest> {
    return this.#call(base, 'GET', `/admin/tenants/${encodeURIComponent(tenant)}/digest?after=${after}&up_to=${upTo}`, DigestSchema);
  }

  /** Starts (or follows) the deletion of the server's copy; `done` false when it goes on past `waitMs`. */
  drop(base: string, tenant: string, waitMs = 5_000): Promise<Dropped> {
    return this.#call(base, 'DELETE', `/admin/tenants/${encodeURIComponent(tenant)}?wait_ms=${Math.trunc(waitMs)}`, DeleteResultSchema);
  }

  /**
   * Deletes the server's copy and waits until none of it is left (a copy must be gone before another is
   * imported there), following the deletion while it answers 202; fails after `boundMs`.
   */
  async dropAll(base: string, tenant: string, boundMs = 600_000): Promise<Dropped> {
    const deadline = Date.now() + boundMs;
    for (;;) {
      const answer = await this.drop(base, tenant, Math.max(0, Math.min(20_000, deadline - Date.now())));
      if (answer.done) return answer;
      if (Date.now() >= deadline)
        throw new OperatorError(`DELETE ${base}/admin/tenants/${tenant}: still deleting after ${Math.round(boundMs / 1000)} s`, 202);
    }
  }

  view(base: string, tenant: string): Promise<ServerView> {
    return this.#call(base, 'GET', `/admin/tenants/${encodeURIComponent(tenant)}/placement`, StatusSchema);
  }
}
