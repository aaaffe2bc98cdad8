// A child process that builds one vector index (./vector-build.ts): its settings in argv[2] as JSON; exit
// 0 once LanceDB has committed the index, else 1 with the failure on stderr.
import * as lancedb from '@lancedb/lancedb';
import type { VectorBuild } from './vector-build.ts';

const build = JSON.parse(process.argv[2] ?? '{}') as VectorBuild;
process.env.LANCEDB_LOG ??= 'error';
try {
  const db = await lancedb.connect(build.dir);
  const table = await db.openTable(build.table);
  await table.createIndex(build.column, {
    config: lancedb.Index.hnswSq({ distanceType: 'cosine', efConstruction: build.efConstruction, numPartitions: build.numPartitions }),
  });
  table.close();
  db.close();
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
