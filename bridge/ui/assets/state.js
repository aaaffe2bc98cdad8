// The view's state lives in the address (hash, or the query string on first load) so a view can be
// shared and reloaded. The API key is never part of it.
const KEYS = [
  'as_of',
  'valid_at',
  'space',
  'kind',
  'category',
  'current_only',
  'include_invalidated',
  'block',
  'q',
  'depth',
  'limit',
  'fact',
];

export function readState() {
  const s = {};
  for (const source of [location.search.slice(1), location.hash.slice(1)]) {
    const p = new URLSearchParams(source);
    for (const k of KEYS) {
      const v = p.get(k);
      if (v !== null && v !== '') s[k] = v;
    }
  }
  return s;
}

export function stateHash(s) {
  const p = new URLSearchParams();
  for (const k of KEYS) if (s[k] !== undefined && s[k] !== null && s[k] !== '') p.set(k, s[k]);
  return p.toString();
}

/** Writes the state into the hash; `push` makes a history entry (opening a block), else it replaces. */
export function writeState(s, push = false) {
  const h = stateHash(s);
  if (h === location.hash.slice(1) && !location.search) return;
  const url = `${location.pathname}${h ? `#${h}` : ''}`;
  if (push) history.pushState(null, '', url);
  else history.replaceState(null, '', url);
}
