import { hash } from 'node:crypto';

/**
 * JSON with object keys sorted at every depth, so equal values give equal text. Content hashes are stored
 * with every row and compared on re-send, so the text must never change: it is exactly what
 * `JSON.stringify(value, replacer)` gives with a replacer that rebuilds each object from its entries
 * sorted by key (canonicalJsonReference in hash.test.ts, checked against this on generated values).
 * That replacer cost ~36 µs per row, a sixth of a 1,000-row import request's time; this walk writes the
 * same text directly, and falls back to the replacer for anything but plain JSON data.
 */
export function canonicalJson(value: unknown): string {
  try {
    return walk(value) as string;
  } catch (error) {
    if (error !== NOT_PLAIN) throw error;
    return JSON.stringify(value, sortKeys);
  }
}

// The one-shot digest: a Hash object per row (createHash/update/digest) cost ~5 µs, about four times the
// hashing itself, on a 1,000-row import request.
export function contentHash(value: unknown): string {
  return hash('sha256', canonicalJson(value), 'hex');
}

/**
 * contentHash for objects that always have the same keys (a node's or an edge's content): the keys'
 * order and their JSON text are worked out once, and each value is walked as canonicalJson walks it, so
 * the text, and the hash, are exactly contentHash's (checked in hash.test.ts). An object with other keys,
 * or a value that is not plain JSON data, is hashed by contentHash itself.
 */
export function recordHasher(keys: readonly string[]): (record: Readonly<Record<string, unknown>>) => string {
  if (keys.some(isIndex)) throw new Error('recordHasher: index-like keys are ordered apart; use contentHash');
  const ordered = [...keys].sort(byCodeUnits);
  const names = ordered.map((k) => `${JSON.stringify(k)}:`);
  return (record) => {
    let out = '{';
    let first = true;
    let count = 0;
    try {
      for (let i = 0; i < ordered.length; i++) {
        const k = ordered[i] as string;
        if (!Object.hasOwn(record, k)) continue;
        count++;
        const member = walk(record[k]);
        if (member === undefined) continue;
        out += (first ? '' : ',') + (names[i] as string) + member;
        first = false;
      }
    } catch (error) {
      if (error !== NOT_PLAIN) throw error;
      return contentHash(record);
    }
    if (count !== Object.keys(record).length || Object.getPrototypeOf(record) !== Object.prototype) return contentHash(record);
    return hash('sha256', `${out}}`, 'hex');
  };
}

function sortKeys(_key: string, v: unknown): unknown {
  return v && typeof v === 'object' && !Array.isArray(v)
    ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    : v;
}

const NOT_PLAIN = Symbol('not plain JSON data');
const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** An array index key: an object rebuilt by the replacer lists these first, in numeric order. */
function isIndex(key: string): boolean {
  const c = key.charCodeAt(0);
  return c >= 48 && c <= 57 && /^(?:0|[1-9]\d{0,9})$/.test(key) && Number(key) <= 4_294_967_294;
}

/** The JSON text of a value, or undefined where JSON.stringify leaves the member out. */
function walk(v: unknown): string | undefined {
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      return Number.isFinite(v) ? JSON.stringify(v) : 'null';
    case 'boolean':
      return v ? 'true' : 'false';
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    case 'object':
      break;
    default:
      throw NOT_PLAIN; // bigint: let JSON.stringify throw its own error
  }
  if (v === null) return 'null';
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) throw NOT_PLAIN;
    let out = '[';
    for (let i = 0; i < v.length; i++) out += (i ? ',' : '') + (walk(v[i]) ?? 'null');
    return `${out}]`;
  }
  const proto: unknown = Object.getPrototypeOf(v);
  if ((proto !== Object.prototype && proto !== null) || typeof (v as { toJSON?: unknown }).toJSON === 'function') throw NOT_PLAIN;
  const obj = v as Record<string, unknown>;
  // Object.keys lists index keys first in numeric order, as the rebuilt object does; the rest are sorted.
  const keys = Object.keys(obj);
  let firstName = 0;
  while (firstName < keys.length && isIndex(keys[firstName] as string)) firstName++;
  const ordered = firstName === 0 ? keys.sort(byCodeUnits) : [...keys.slice(0, firstName), ...keys.slice(firstName).sort(byCodeUnits)];
  let out = '{';
  let first = true;
  for (const k of ordered) {
    const member = walk(obj[k]);
    if (member === undefined) continue;
    out += `${first ? '' : ','}${JSON.stringify(k)}:${member}`;
    first = false;
  }
  return `${out}}`;
}
