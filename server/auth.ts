// Keys select tenants. A key not yet matched is compared with every configured key in constant time, so
// neither a match nor its position in the map shows in the response time.
import { createHash, timingSafeEqual } from 'node:crypto';
import { errorDetail, UNAUTHORIZED_WHY } from '../tools/error-body.ts';
import type { Config } from './config.ts';

export const unauthorized = errorDetail('SVC_UNAUTHORIZED', UNAUTHORIZED_WHY);

/** Distinct valid keys remembered; beyond it the memory starts again (keys are few per server). */
const MATCHED_MAX = 4_096;

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

export class KeyRing {
  readonly #entries: { digest: Buffer; tenant: string }[];

  constructor(keys: ReadonlyMap<string, string>) {
    this.#entries = [...keys].map(([key, tenant]) => ({ digest: digest(key), tenant }));
  }

  /**
   * Keys already matched, so a request (which asks up to three times: the early refusal, the door, the
   * forwarder) and the next one with the same key skip the hash and the comparisons. Only valid keys enter,
   * so a lookup that misses learns nothing a wrong key would not; bounded, cleared when full.
   */
  readonly #matched = new Map<string, string>();

  /** The tenant of a presented key, or null. */
  tenantOf(presented: string): string | null {
    const known = this.#matched.get(presented);
    if (known !== undefined) return known;
    const d = digest(presented);
    let found: string | null = null;
    for (const e of this.#entries) if (timingSafeEqual(d, e.digest) && found === null) found = e.tenant;
    if (found !== null) {
      if (this.#matched.size >= MATCHED_MAX) this.#matched.clear();
      this.#matched.set(presented, found);
    }
    return found;
  }
}

/** The bearer token of an Authorization header, or null. */
export function bearerToken(header: string | undefined | null): string | null {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? '');
  return m?.[1]?.trim() || null;
}

/** The tenant a request acts for: from its key on a hosted deployment, else SVC_TENANT; null: refuse. */
export function tenantResolver(config: Pick<Config, 'apiKeys' | 'tenant'>): (authorization: string | undefined | null) => string | null {
  const keys = config.apiKeys;
  if (!keys) return () => config.tenant;
  const ring = new KeyRing(keys);
  return (authorization) => {
    const token = bearerToken(authorization);
    return token ? ring.tenantOf(token) : null;
  };
}
