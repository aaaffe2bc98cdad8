// What a handler is given besides its input. The tenant comes from the key (or SVC_TENANT), never from
// input; `space`, when set, confines every read and write to that space (the app-scoped MCP address).
import type { Extractor } from '../extract/types.ts';
import type { Admission } from './admission.ts';
import type { Ledger } from '../storage/log/ledger.ts';
import type { SearchIndex } from '../storage/search/search-index.ts';

/** Optional engines the ledger works with; each door passes the ones the server runs. */
export interface Services {
  readonly version: string;
  /** The search index; absent when it could not start (search answers 503). */
  readonly search?: SearchIndex | undefined;
  /** Turns messages into blocks; absent: the offline rule-based extractor. */
  readonly extractor?: Extractor | undefined;
  /** Bounds what runs and waits at once (tools/admission.ts); absent: everything is admitted at once. */
  readonly admission?: Admission | undefined;
}

export interface Context {
  readonly ledger: Ledger;
  readonly tenant: string;
  readonly confinedSpace?: string | undefined;
  readonly services: Services;
  /**
   * Aborts when the request is past its deadline or its client has gone: work that can stop (a queue
   * wait, a search between phases, an export between files) checks it and stops.
   */
  readonly signal?: AbortSignal | undefined;
}
