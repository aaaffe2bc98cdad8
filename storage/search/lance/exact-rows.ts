// How many rows a vector query may admit for an exact answer: a setting of its own, so the server's
// configuration reads it without loading LanceDB.
import { envWholeNumber } from '../../env-megabytes.ts';

/**
 * Rows a vector query's prefilter may admit for it to be answered by an exact (flat) scan although the
 * table has an HNSW index. An HNSW answer depends on how the graph was built (insertion order, the rows
 * present at each build, threads) and its distances on the quantizer trained then, so two tables holding
 * the same rows (a tenant moved to another server) answer differently; a flat scan is a function of the
 * rows. Beyond this the index answers (approximate). SVC_SEARCH_EXACT_ROWS sets it; 0 keeps the index for
 * every query. Measured cost: docs/search.md.
 */
export const exactVectorRows = (env: NodeJS.ProcessEnv = process.env): number =>
  // Blank counts as unset here (Number('  ') is 0, which would keep the index for every query).
  env.SVC_SEARCH_EXACT_ROWS?.trim() === '' ? EXACT_VECTOR_ROWS : envWholeNumber(env, 'SVC_SEARCH_EXACT_ROWS', EXACT_VECTOR_ROWS, 0, 'rows');
/**
 * As many rows as a space searched in memory holds (SPACE_COPY_MAX_ROWS), where a flat scan is as fast as
 * HNSW (HNSW_MIN_ROWS): exact at 100k rows cost ~14× (docs/search.md), so larger filters keep the index.
 */
export const EXACT_VECTOR_ROWS = 20_000;
