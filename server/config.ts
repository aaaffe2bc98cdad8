// The environment contract, read once at start-up. A bad setting stops the server with a message that
// names the variable.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { journalCopyRows, kuzuBufferMb } from '../storage/log/kuzu/kuzu-graph.ts';
import { memoryBudgetMb } from '../storage/read/resident-views.ts';
import { idPlacesMb } from '../storage/log/id-places.ts';
import { exactVectorRows } from '../storage/search/lance/exact-rows.ts';
import { indexNice } from '../storage/search/lance/index-priority.ts';
import { admissionLimits, type AdmissionLimits } from '../tools/admission.ts';
import { heapGrowthPercent } from './heap-growth.ts';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** key → tenant; null on an open (local, single-tenant) deployment. */
  apiKeys: Map<string, string> | null;
  tenant: string;
  embedder: string;
  extractor: string;
  openaiBaseUrl: string | undefined;
  openaiApiKey: string | undefined;
  maxBodyBytes: number;
  /** Kuzu's buffer pool (SVC_KUZU_BUFFER_MB); the graph store reads the same variable when it opens. */
  kuzuBufferMb: number;
  /** Read-model budget (SVC_MEMORY_MB); the ledger reads the same variable when it opens. */
  memoryMb: number;
  /** Budget of the tables of ids' places (SVC_ID_PLACES_MB); the ledger reads the same variable when it opens. */
  idPlacesMb: number;
  /** V8's heap growing factor in percent (SVC_HEAP_GROWTH_PERCENT, server/heap-growth.ts); 0 leaves V8's. */
  heapGrowthPercent: number;
  /** Nice value of the search index's threads (SVC_INDEX_NICE); 0 leaves them at the server's. */
  indexNice: number;
  /** This server's name in a cluster (SVC_SERVER_ID): sent in `x-ledger-server`, matched against placements. */
  serverId: string | null;
  /** Placement in etcd (SVC_ETCD, SVC_ETCD_STALE_MS); null: every tenant is served here, as on one machine. */
  etcd: { hosts: string[]; staleMs: number; advertiseUrl: string | null } | null;
  /** The operator's key (SVC_OPERATOR_KEY) for /admin routes; null: those routes answer 404. */
  operatorKey: string | null;
  /** What runs and waits at once, and each request's deadline (SVC_MAX_HEAVY, SVC_HEAVY_QUEUE, ...). */
  admission: AdmissionLimits;
  /** Connections the kernel holds for the server to accept (SVC_LISTEN_BACKLOG; capped by net.core.somaxconn). */
  listenBacklog: number;
  /** Listening sockets on the port (SVC_LISTEN_SOCKETS, Linux only): how many new connections are accepted per turn of the event loop. */
  listenSockets: number;
  /**
   * Threads that serve HTTP besides the one holding the ledger (SVC_HTTP_THREADS; 0: that one thread
   * serves it all). They parse, route, read bodies and write answers; each operation still runs on the
   * ledger's thread (server/fronts/).
   */
  httpThreads: number;
}

/**
 * Node's listen backlog is 511. A burst of 1,024 connections opened at once while the event loop is busy
 * overflows it; Linux then drops the handshakes it cannot queue and each client resends after 1, 3, 7 s,
 * so the refusal the server would give in milliseconds reaches it seconds later (docs/load.md).
 */
export const LISTEN_BACKLOG_DEFAULT = 4096;

/** Sockets listening on the port (server/listen-wide.ts): each accepts one new connection per turn of the event loop. */
export const LISTEN_SOCKETS_DEFAULT = 32;

function listenSockets(env: NodeJS.ProcessEnv): number {
  const text = env.SVC_LISTEN_SOCKETS?.trim();
  if (!text) return LISTEN_SOCKETS_DEFAULT;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > 256)
    throw new ConfigError(`SVC_LISTEN_SOCKETS: expected a whole number from 1 to 256, got "${env.SVC_LISTEN_SOCKETS}"`);
  return n;
}

/**
 * Beside the ledger's thread, which runs every operation and is the first to fill up, two HTTP threads are
 * enough to keep it busy (docs/load.md); one on a machine of two cores, none on one.
 */
export const httpThreadsDefault = (cores = availableParallelism()): number => Math.max(0, Math.min(2, cores - 1));

function httpThreads(env: NodeJS.ProcessEnv): number {
  const text = env.SVC_HTTP_THREADS?.trim();
  if (!text) return httpThreadsDefault();
  const n = Number(text);
  if (!/^\d+$/.test(text) || n > 64)
    throw new ConfigError(`SVC_HTTP_THREADS: expected a whole number from 0 to 64, got "${env.SVC_HTTP_THREADS}"`);
  return n;
}

function listenBacklog(env: NodeJS.ProcessEnv): number {
  const text = env.SVC_LISTEN_BACKLOG?.trim();
  if (!text) return LISTEN_BACKLOG_DEFAULT;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > 65_535)
    throw new ConfigError(`SVC_LISTEN_BACKLOG: expected a whole number from 1 to 65535, got "${env.SVC_LISTEN_BACKLOG}"`);
  return n;
}

export class ConfigError extends Error {}

function parseKeyPairs(text: string): Map<string, string> {
  const keys = new Map<string, string>();
  for (const pair of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const eq = pair.indexOf('=');
    const key = pair.slice(0, eq).trim();
    const tenant = pair.slice(eq + 1).trim();
    if (eq <= 0 || !key || !tenant) throw new ConfigError(`SVC_API_KEYS: expected key=tenant pairs separated by commas, got "${pair}"`);
    keys.set(key, tenant);
  }
  return keys;
}

function parseKeyFile(path: string): Map<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(`SVC_API_KEYS_FILE: cannot read a JSON object from ${path}: ${(error as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new ConfigError('SVC_API_KEYS_FILE: expected a JSON object {key: tenant}');
  const keys = new Map<string, string>();
  for (const [key, tenant] of Object.entries(parsed as Record<string, unknown>)) {
    if (typeof tenant !== 'string' || !tenant || !key)
      throw new ConfigError(`SVC_API_KEYS_FILE: the tenant of a key must be a non-empty string`);
    keys.set(key, tenant);
  }
  return keys;
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = Number(env.PORT ?? '8787');
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`PORT: not a port number: ${env.PORT}`);
  let apiKeys: Map<string, string> | null = null;
  if (env.SVC_API_KEYS) apiKeys = parseKeyPairs(env.SVC_API_KEYS);
  if (env.SVC_API_KEYS_FILE) {
    apiKeys ??= new Map();
    for (const [k, t] of parseKeyFile(env.SVC_API_KEYS_FILE)) apiKeys.set(k, t);
  }
  if (apiKeys && apiKeys.size === 0) throw new ConfigError('SVC_API_KEYS / SVC_API_KEYS_FILE: set but holds no key');
  const embedder = env.SVC_EMBEDDER || 'local';
  const extractor = env.SVC_EXTRACTOR || 'local';
  for (const [name, value] of [
    ['SVC_EMBEDDER', embedder],
    ['SVC_EXTRACTOR', extractor],
  ] as const) {
    if (value !== 'local' && !/^openai:.+/.test(value))
      throw new ConfigError(`${name}: expected "local" or "openai:<model>", got "${value}"`);
  }
  const maxBodyBytes = Number(env.SVC_MAX_BODY_BYTES ?? String(32 * 1024 * 1024));
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 1024)
    throw new ConfigError('SVC_MAX_BODY_BYTES: expected a whole number of bytes, at least 1024');
  let kuzuBuffer: number;
  let memoryMb: number;
  let placesMb: number;
  let nice: number;
  let heapGrowth: number;
  let admission: AdmissionLimits;
  try {
    admission = admissionLimits(env);
    kuzuBuffer = kuzuBufferMb(env);
    memoryMb = memoryBudgetMb(env);
    nice = indexNice(env);
    heapGrowth = heapGrowthPercent(env);
    exactVectorRows(env); // read by the search index when it opens; refused here, before anything starts
    journalCopyRows(env); // read by the graph store when it opens, the same way
    placesMb = idPlacesMb(env);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const serverId = env.SVC_SERVER_ID?.trim() || null;
  if (serverId !== null && !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/.test(serverId))
    throw new ConfigError(`SVC_SERVER_ID: expected letters, digits, '.', '_' or '-' (an HAProxy backend name), got "${serverId}"`);
  const etcd = readEtcd(env, serverId);
  const operatorKey = env.SVC_OPERATOR_KEY?.trim() || null;
  if (operatorKey !== null && operatorKey.length < 16)
    throw new ConfigError('SVC_OPERATOR_KEY: expected at least 16 characters (it copies and deletes whole tenants)');
  if (operatorKey !== null && apiKeys?.has(operatorKey))
    throw new ConfigError("SVC_OPERATOR_KEY: is also a tenant's key in SVC_API_KEYS; give the operator a key of its own");
  return {
    port,
    host: env.HOST || '127.0.0.1',
    dataDir: resolve(env.SVC_DATA_DIR || './data'),
    apiKeys,
    tenant: env.SVC_TENANT || 'local',
    embedder,
    extractor,
    openaiBaseUrl: env.OPENAI_BASE_URL || undefined,
    openaiApiKey: env.OPENAI_API_KEY || undefined,
    maxBodyBytes,
    kuzuBufferMb: kuzuBuffer,
    memoryMb,
    idPlacesMb: placesMb,
    heapGrowthPercent: heapGrowth,
    indexNice: nice,
    serverId,
    etcd,
    operatorKey,
    admission,
    listenBacklog: listenBacklog(env),
    listenSockets: listenSockets(env),
    httpThreads: httpThreads(env),
  };
}

function readEtcd(env: NodeJS.ProcessEnv, serverId: string | null): Config['etcd'] {
  if (!env.SVC_ETCD?.trim()) return null;
  const hosts = env.SVC_ETCD.split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  for (const host of hosts)
    if (!/^https?:\/\/[^/\s]+\/?$/.test(host))
      throw new ConfigError(`SVC_ETCD: expected etcd client URLs separated by commas, e.g. http://127.0.0.1:2379, got "${host}"`);
  if (serverId === null) throw new ConfigError('SVC_ETCD: set SVC_SERVER_ID too (the name placements in etcd use for this server)');
  const staleMs = Number(env.SVC_ETCD_STALE_MS ?? '15000');
  if (!Number.isInteger(staleMs) || staleMs < 0)
    throw new ConfigError(
      'SVC_ETCD_STALE_MS: expected a whole number of milliseconds (how long to trust the last placement while etcd is unreachable)',
    );
  // Registered as /servers/<id> so `memory-ledger move` finds the server; derived from HOST and PORT once
  // listening when unset (serve.ts).
  const advertiseUrl = env.SVC_ADVERTISE_URL?.trim().replace(/\/+$/, '') || null;
  if (advertiseUrl !== null && !/^https?:\/\/[^/\s]+$/.test(advertiseUrl))
    throw new ConfigError(
      `SVC_ADVERTISE_URL: expected the base URL other cluster members reach this server at, e.g. http://10.0.0.2:8787, got "${advertiseUrl}"`,
    );
  return { hosts, staleMs, advertiseUrl };
}
