// What an HTTP thread (./front.ts) and the ledger's thread (./answer-calls.ts) say to each other. A call
// carries an operation's raw input and the tenant its key resolved to; validation, admission and the work
// are the ledger thread's, as for a request it reads itself. Only plain data crosses: the answer is JSON
// text: for REST what the REST door would send, for MCP the tool result.
import type { MessagePort } from 'node:worker_threads';
import type { RestRoute } from '../../bridge/routes.ts';
import type { Source } from '../../tools/error-body.ts';
import type { LegacyEra } from '../mcp/plain-call.ts';

export type FrontCall =
  | {
      readonly id: number;
      readonly door: 'rest';
      readonly operation: string;
      readonly input: unknown;
      readonly tenant: string;
      /** The fields taken from the path: an error about one of them is located in the path. */
      readonly pathFields: readonly string[];
      readonly from: Source;
    }
  | {
      readonly id: number;
      readonly door: 'mcp';
      readonly operation: string;
      readonly args: Record<string, unknown>;
      readonly tenant: string;
      readonly confinedSpace: string | undefined;
    };

/** The client went away: the call's signal aborts, so a queued or running read stops early. */
export interface FrontCancel {
  readonly id: number;
  readonly cancel: true;
}

export type FrontReply =
  | { readonly id: number; readonly kind: 'rest'; readonly status: number; readonly body: string; readonly retryAfter?: number | undefined }
  /** The tool result as JSON text: a string crosses threads in one copy, an object graph is cloned field by field. */
  | { readonly id: number; readonly kind: 'mcp'; readonly result: string; readonly retryAfter?: number | undefined }
  /** The ledger is not held by this process now (another local process holds the folder): send the request on whole. */
  | { readonly id: number; readonly kind: 'forward' };

/** An operation route as an HTTP thread matches it. */
export type FrontRoute = Pick<RestRoute, 'method' | 'path' | 'operation' | 'from'>;

/** What the ledger's thread gives each HTTP thread to start it. */
export interface FrontData {
  /** The public listener: every HTTP thread binds the same port (SO_REUSEPORT) and the kernel spreads connections. */
  readonly listen: { port: number; host: string; backlog: number; sockets: number; probe: boolean };
  /** Where everything that is not an operation call (docs, UI, admin, MCP handshakes, exports) is sent on whole. */
  readonly inner: { host: string; port: number };
  readonly apiKeys: Map<string, string> | null;
  readonly tenant: string;
  readonly maxBodyBytes: number;
  /** SVC_MAX_REQUESTS: operation requests inside all HTTP threads together, counted in `inside`, before any is read. */
  readonly maxRequests: number;
  /**
   * Int32s shared by every HTTP thread (FRONT_COUNTS): the operation requests they hold now, their
   * connections open now, and the connections they accepted since the start.
   */
  readonly inside: SharedArrayBuffer;
  /**
   * Int32s the ledger thread keeps: the search lanes' states (tools/search-gate.ts), each tenant's share at
   * its place in `gateTenants` (the tenants of the keys at start).
   */
  readonly gate: SharedArrayBuffer;
  readonly gateTenants: readonly string[];
  /**
   * What the operations and the SDK say, given as data so a thread loads neither (most of a thread's
   * memory, docs/load.md): the routes answered with JSON (the export's, answered with a file, is passed on whole), every
   * tool's name, and the 2025 protocol era.
   */
  readonly routes: readonly FrontRoute[];
  /** The operations that wait in the search lanes (a REST route of one is refused unread when both would refuse it). */
  readonly searchOperations: readonly string[];
  readonly tools: readonly string[];
  readonly legacyEra: LegacyEra;
}

/**
 * Where each count lies in `FrontData.inside`. With SVC_LOAD_STATS=1 each thread also raises the two
 * event-loop slots to the highest p99 and maximum delay (µs) of its last second, and the load-stats line
 * takes and clears them: a refusal made here waits for that loop, not the ledger thread's.
 */
export const FRONT_COUNTS = { requests: 0, open: 1, accepted: 2, loopP99Us: 3, loopMaxUs: 4, length: 5 } as const;

/** The ledger thread's first message to an HTTP thread: its settings and its channel for calls. */
export interface FrontStart {
  readonly start: FrontData & { readonly calls: MessagePort };
}

/** The thread's first message: listening (with the port bound, for the next thread when PORT is 0), or why not. */
export type FrontStarted = { readonly listening: number } | { readonly failed: string; readonly code: string | undefined };
