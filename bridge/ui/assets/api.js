// The public REST API, as the browser reaches it. A hosted server's key is kept in sessionStorage (this
// tab only) and sent as a bearer token; it never goes into an address.
const KEY = 'memory-ledger.key';

export class AuthError extends Error {}
export class ApiError extends Error {
  constructor(status, body) {
    super(describe(status, body));
    this.status = status;
    this.body = body;
  }
}

function describe(status, body) {
  const d = body && typeof body === 'object' ? body.detail : undefined;
  if (Array.isArray(d)) return `${status}: ${d.map((x) => `${(x.loc ?? []).join('.')}: ${x.msg}`).join('; ')}`;
  if (d && typeof d === 'object') return `${status} ${d.error ?? ''}${d.why ? `: ${d.why}` : ''}`;
  return `HTTP ${status}`;
}

export const key = {
  get: () => sessionStorage.getItem(KEY),
  set: (k) => sessionStorage.setItem(KEY, k),
  clear: () => sessionStorage.removeItem(KEY),
};

function headers(json) {
  const h = {};
  const k = key.get();
  if (k) h.authorization = `Bearer ${k}`;
  if (json) h['content-type'] = 'application/json';
  return h;
}

function url(path, query) {
  const u = new URL(path, location.origin);
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null && v !== '') u.searchParams.set(k, String(v));
  return u;
}

async function send(method, path, { query, body } = {}) {
  const res = await fetch(url(path, query), {
    method,
    headers: headers(body !== undefined),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status === 401) throw new AuthError('the server refused the key');
  return res;
}

export async function call(method, path, opts) {
  const res = await send(method, path, opts);
  let body = null;
  try {
    body = await res.json();
  } catch {
    /* not JSON */
  }
  if (!res.ok) throw new ApiError(res.status, body);
  return body;
}

export const get = (path, query) => call('GET', path, { query });
export const post = (path, body) => call('POST', path, { body });

/** Fetches the export with the bearer header and saves the archive: no key ever sits in a link. */
export async function download(path, query) {
  const res = await send('GET', path, { query });
  if (!res.ok) {
    let body = null;
    try {
      body = await res.json();
    } catch {
      /* not JSON */
    }
    throw new ApiError(res.status, body);
  }
  const name = /filename="?([^";]+)"?/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'ledger.tar.gz';
  const blob = await res.blob();
  const href = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = href;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
  return name;
}
