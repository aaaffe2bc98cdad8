// How far V8 lets the JavaScript heap grow past what its last full collection kept. Under sustained load
// the heap is mostly short-lived request garbage (parsed bodies, rows out, answers), and with the heap
// limit V8 picks on a machine with more than ~16 GB (4 GB) it may let the old generation reach up to 4×
// what survived before it collects again: under MCP searches at 64 connections the retained heap stayed at
// 104 → 113 MB (two heap snapshots 40 s apart) while heapUsed climbed 110 → 289 MB and RSS with it
// (docs/load.md, "Where the memory went"). A fixed growing factor bounds that slack to a share of what is
// live, which the server's own bounds (SVC_MEMORY_MB and the search copies) already bound, without the
// hard ceiling of --max-old-space-size, which crashes the process when live data reaches it.
import v8 from 'node:v8';
import { envWholeNumber } from '../storage/env-megabytes.ts';

export const HEAP_GROWTH_DEFAULT = 50;
const HEAP_GROWTH_MAX = 300;
const FLAG = '--heap-growing-percent';

/** SVC_HEAP_GROWTH_PERCENT: 0 leaves V8's own heuristics; a bad value throws naming the variable. */
export function heapGrowthPercent(env: NodeJS.ProcessEnv = process.env): number {
  const n = envWholeNumber(env, 'SVC_HEAP_GROWTH_PERCENT', HEAP_GROWTH_DEFAULT, 0, 'percent');
  if (n > HEAP_GROWTH_MAX)
    throw new Error(`SVC_HEAP_GROWTH_PERCENT: expected a whole number of percent from 0 to ${HEAP_GROWTH_MAX}, got "${n}"`);
  return n;
}

/**
 * Sets V8's heap growing factor for this process (Node refuses the flag in NODE_OPTIONS, so it is set at
 * run time; V8 reads it at every full collection). A flag given on node's command line wins. Returns
 * what is in force, for the start-up line.
 */
export function applyHeapGrowth(percent: number, execArgv: readonly string[] = process.execArgv): string {
  if (execArgv.some((a) => a.startsWith(FLAG))) return `V8's heap grows as set on the command line (${FLAG})`;
  if (percent === 0) return "V8's heap grows by V8's own heuristics (SVC_HEAP_GROWTH_PERCENT=0)";
  v8.setFlagsFromString(`${FLAG}=${percent}`);
  return `V8's heap grows at most ${percent}% past what its last full collection kept (SVC_HEAP_GROWTH_PERCENT)`;
}

/** The start-up line naming what bounds the server's memory, so an operator can add it up. */
export function describeMemory(bounds: {
  growth: string;
  memoryMb: number;
  kuzuBufferMb: number;
  spaceCopiesMb: number;
  vectorMirrorsMb: number;
  lanceCachesMb: number;
  idPlacesMb: number;
  indexQueueRows: number;
}): string {
  const limitMb = Math.round(v8.getHeapStatistics().heap_size_limit / 1048576);
  return (
    `memory: read models ${bounds.memoryMb} MB (SVC_MEMORY_MB), search copies ${bounds.spaceCopiesMb} + ${bounds.vectorMirrorsMb} MB ` +
    `(SVC_SEARCH_SPACES_MB, SVC_SEARCH_VECTORS_MB), ids' places ${bounds.idPlacesMb} MB (SVC_ID_PLACES_MB), ` +
    `LanceDB caches ${bounds.lanceCachesMb} MB, Kuzu buffer pool ${bounds.kuzuBufferMb} MB ` +
    `(SVC_KUZU_BUFFER_MB), rows waiting for the search index ${bounds.indexQueueRows} (SVC_INDEX_QUEUE_ROWS); ` +
    `${bounds.growth}; V8 heap limit ${limitMb} MB`
  );
}
