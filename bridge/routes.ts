// The REST route table: each route names an operation and where its input comes from. Path, query and
// body are mapped separately onto the operation's one input schema; nothing else is read.
import type { Context } from '../tools/context.ts';
import { archiveResponse } from './archive-response.ts';

export interface RestRoute {
  method: 'GET' | 'POST';
  /** Segments; `:name` takes one percent-decoded path segment (ids may hold `/` as %2F). */
  path: string;
  operation: string;
  from: 'query' | 'body';
  /** Turns the operation's result into a response other than JSON (the export archive). */
  respond?: (result: unknown, ctx: Context) => Response | Promise<Response>;
}

export const routes: RestRoute[] = [
  { method: 'POST', path: '/v1/memories', operation: 'remember', from: 'body' },
  { method: 'GET', path: '/v1/memories', operation: 'list_memories', from: 'query' },
  { method: 'GET', path: '/v1/memories/:id', operation: 'get_memory', from: 'query' },
  { method: 'POST', path: '/v1/search', operation: 'search_memory', from: 'body' },
  { method: 'GET', path: '/v1/memories/:id/why', operation: 'why', from: 'query' },
  { method: 'POST', path: '/v1/facts', operation: 'declare_fact', from: 'body' },
  { method: 'POST', path: '/v1/resolve', operation: 'resolve_fact', from: 'body' },
  { method: 'GET', path: '/v1/export', operation: 'export_ledger', from: 'query', respond: archiveResponse },
  { method: 'POST', path: '/v1/memories/:id/invalidate', operation: 'invalidate_memory', from: 'body' },
  { method: 'GET', path: '/v1/spaces', operation: 'list_spaces', from: 'query' },
];

/** Matches a raw (still percent-encoded) path against a route path; the params, or null. */
export function matchPath(pattern: string, rawPath: string): Record<string, string> | null {
  const want = pattern.split('/');
  const got = rawPath.replace(/\/+$/, '').split('/');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] ?? '';
    const g = got[i] ?? '';
    if (w.startsWith(':')) {
      if (!g) return null;
      try {
        params[w.slice(1)] = decodeURIComponent(g);
      } catch {
        return null;
      }
    } else if (w !== g) return null;
  }
  return params;
}
