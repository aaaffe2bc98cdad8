// What a handler is given besides its input. The tenant comes from the key (or SVC_TENANT), never from
// input; `space`, when set, confines every read and write to that space (the app-scoped MCP address).
import type { Extractor } from '../extract/types.ts';
import type { Ledger } from '../storage/ledger.ts';
import type { SearchIndex } from '../storage/search/search-index.ts';

/** Optional engines the ledger works with; each door passes the ones the server runs. */
export interface Services {
  readonly version: string;
  /** The search index; absent when it could not start (search answers 503). */
  readonly search?: SearchIndex | undefined;
  /** Turns messages into blocks; absent: the offline rule-based extractor. */
  readonly extractor?: Extractor | undefined;
}

export interface Context {
  readonly ledger: Ledger;
  readonly tenant: string;
  readonly confinedSpace?: string | undefined;
  readonly services: Services;
}
