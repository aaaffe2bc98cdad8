// What HAProxy's two maps should hold, from what etcd holds, and the runtime commands that take a map from
// one content to another. Pure, so the agent's arithmetic is tested without HAProxy or etcd.
import { parsePlacement } from './placement.ts';

/** An API key's SHA-256 as HAProxy computes it (`http_auth_bearer,sha2(256),hex,lower`). */
export const KEY_HASH = /^[0-9a-f]{64}$/;
/** The only spaces a keyless request can open (server/mcp/http.ts). */
export const SECRET_SPACE = /^svc:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A server id is an HAProxy backend name's suffix (config.ts checks SVC_SERVER_ID the same way). */
export const SERVER_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

export interface EtcdView {
  /** key hash → tenant (`/keys/<hash>`). */
  keys: ReadonlyMap<string, string>;
  /** tenant → placement JSON text (`/placement/<tenant>`). */
  placements: ReadonlyMap<string, string>;
  /** svc: space → tenant (`/spaces/<space>`). */
  spaces: ReadonlyMap<string, string>;
}

export interface ProxyMaps {
  /** key hash → server id */
  keys: Map<string, string>;
  /** space → server id */
  spaces: Map<string, string>;
  /** Entries left out, with why (logged by the agent). */
  skipped: string[];
}

/**
 * Only placed tenants get a line: an unplaced one falls through to consistent hashing, and so does a tenant
 * whose placement is broken (every server answers it 503 until an operator fixes the record).
 */
export function proxyMaps(view: EtcdView): ProxyMaps {
  const serverOf = new Map<string, string>();
  const skipped: string[] = [];
  for (const [tenant, text] of view.placements) {
    const record = parsePlacement(text);
    if ('broken' in record) skipped.push(`placement of ${tenant}: ${record.broken}`);
    else if (!SERVER_ID.test(record.server)) skipped.push(`placement of ${tenant}: server "${record.server}" is not a backend name`);
    else serverOf.set(tenant, record.server);
  }
  const keys = new Map<string, string>();
  for (const [hash, tenant] of view.keys) {
    if (!KEY_HASH.test(hash)) {
      skipped.push(`/keys/${hash}: not a lower-case SHA-256 hex digest`);
      continue;
    }
    const server = serverOf.get(tenant);
    if (server !== undefined) keys.set(hash, server);
  }
  const spaces = new Map<string, string>();
  for (const [space, tenant] of view.spaces) {
    if (!SECRET_SPACE.test(space)) continue;
    const server = serverOf.get(tenant);
    if (server !== undefined) spaces.set(space, server);
  }
  return { keys, spaces, skipped };
}

/** Runtime API commands turning map `file` from `from` into `to`: set for changed, add for new, del for gone. */
export function mapCommands(file: string, from: ReadonlyMap<string, string>, to: ReadonlyMap<string, string>): string[] {
  const commands: string[] = [];
  for (const [key, value] of to) {
    const was = from.get(key);
    if (was === undefined) commands.push(`add map ${file} ${key} ${value}`);
    else if (was !== value) commands.push(`set map ${file} ${key} ${value}`);
  }
  for (const key of from.keys()) if (!to.has(key)) commands.push(`del map ${file} ${key}`);
  return commands;
}

/** A map file's text, sorted so that rewriting an unchanged map leaves the file unchanged. */
export function mapFileText(entries: ReadonlyMap<string, string>): string {
  return [...entries]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k} ${v}\n`)
    .join('');
}
