// A child process doing one piece of a table's heavy maintenance for the server (./work-apart.ts): the
// work in argv[2] as JSON; exit 0 once LanceDB has committed it (an optimize first sends its counts),
// else 1 with the failure on stderr.
import * as lancedb from '@lancedb/lancedb';
import type { OptimizeCounts, WorkApart } from './work-apart.ts';

const work = JSON.parse(process.argv[2] ?? '{}') as WorkApart;
// The server went away (killed): stop rather than commit beside the server started after it.
process.on('disconnect', () => process.exit(1));
process.env.LANCEDB_LOG ??= 'error';
try {
  const db = await lancedb.connect(work.dir);
  const table = await db.openTable(work.table);
  if (work.kind === 'vector index')
    await table.createIndex(work.column, {
      config: lancedb.Index.hnswSq({ distanceType: 'cosine', efConstruction: work.efConstruction, numPartitions: work.numPartitions }),
    });
  else {
    const { compaction } = await table.optimize({ cleanupOlderThan: new Date(work.cleanupOlderThan) });
    const counts: OptimizeCounts = { fragmentsRemoved: compaction.fragmentsRemoved, fragmentsAdded: compaction.fragmentsAdded };
    await new Promise<void>((resolve, reject) => {
      if (!process.send) resolve();
      else process.send(counts, (error: Error | null) => (error ? reject(error) : resolve()));
    });
  }
  table.close();
  db.close();
  // The channel's listener above keeps the process alive: done, it ends here.
  process.exit(0);
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
