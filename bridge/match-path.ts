// A REST route's path matched against a request's, apart from the route table so the HTTP threads
// (server/fronts/) match paths without loading the operations the table is derived from.

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
