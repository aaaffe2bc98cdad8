// Keys select tenants. Every configured key is compared in constant time, so neither a match nor its
// position in the map shows in the response time.
import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

export class KeyRing {
  readonly #entries: { digest: Buffer; tenant: string }[];

  constructor(keys: ReadonlyMap<string, string>) {
    this.#entries = [...keys].map(([key, tenant]) => ({ digest: digest(key), tenant }));
  }

  /** The tenant of a presented key, or null. */
  tenantOf(presented: string): string | null {
    const d = digest(presented);
    let found: string | null = null;
    for (const e of this.#entries) if (timingSafeEqual(d, e.digest) && found === null) found = e.tenant;
    return found;
  }
}

/** The bearer token of an Authorization header, or null. */
export function bearerToken(header: string | undefined | null): string | null {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? '');
  return m?.[1]?.trim() || null;
}
