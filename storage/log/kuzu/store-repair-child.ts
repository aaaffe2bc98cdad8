// A child process doing one step of opening the graph store safely (./store-repair.ts): argv[2] the step,
// argv[3] the store's folder. `recover`: open the store (the engine's WAL and the write journal copied in)
// and close it. `rebuild`: the store's rows into a new store in `rebuild/`, every table's count checked,
// then `rebuild/ready`. Exit 0 when done, else 1 with the failure on stderr; a crash of the engine ends it
// by a signal, which is what the parent looks for.
import kuzu, { type Connection } from 'kuzu';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KuzuGraph, kuzuBufferMb } from './kuzu-graph.ts';
import { READY, REBUILD_DIR, STORE_FILE, type RepairStep } from './store-repair.ts';
import { cypherString } from './tables.ts';

const [step, dir] = process.argv.slice(2) as [RepairStep, string];
/** The least buffer pool a rebuild opens the stores with. */
const REBUILD_BUFFER_MB = 2048;

/** Rows of every node and relationship table. */
async function counts(conn: Connection): Promise<Map<string, number>> {
  const all = async (statement: string): Promise<Record<string, unknown>[]> => {
    const result = await conn.query(statement);
    const one = Array.isArray(result) ? result[result.length - 1] : result;
    return one ? ((await one.getAll()) as Record<string, unknown>[]) : [];
  };
  const out = new Map<string, number>();
  for (const table of await all('CALL show_tables() RETURN name, type')) {
    const name = String(table.name);
    const pattern = table.type === 'REL' ? `()-[x:${name}]->()` : `(x:${name})`;
    const [row] = await all(`MATCH ${pattern} RETURN count(*) AS n`);
    out.set(name, Number(row?.n ?? 0));
  }
  return out;
}

async function rebuild(): Promise<void> {
  const into = join(dir, REBUILD_DIR);
  rmSync(into, { recursive: true, force: true });
  mkdirSync(into, { recursive: true });
  const exported = join(into, 'export');
  // IMPORT builds each table's primary-key index in the buffer pool: the server's 256 MB ran out on a 3M-row
  // store ("the buffer pool is full"), 2 GB rebuilt it (22 s, 1.1 GB RSS). This process ends with the rebuild.
  const bufferBytes = Math.max(kuzuBufferMb(), REBUILD_BUFFER_MB) * 1024 * 1024;
  // Read-only: the engine reads its WAL too, and writes nothing into the files being rescued.
  const old = new kuzu.Database(join(dir, STORE_FILE), bufferBytes, true, true);
  const from = new kuzu.Connection(old);
  await from.query(`EXPORT DATABASE ${cypherString(exported)} (format="parquet")`);
  const before = await counts(from);
  await from.close();
  await old.close();
  const fresh = new kuzu.Database(join(into, STORE_FILE), bufferBytes);
  const to = new kuzu.Connection(fresh);
  await to.query(`IMPORT DATABASE ${cypherString(exported)}`);
  const after = await counts(to);
  await to.close();
  await fresh.close();
  const differ = [...new Set([...before.keys(), ...after.keys()])].filter((t) => before.get(t) !== after.get(t));
  if (differ.length > 0)
    throw new Error(`the rebuilt store's rows differ: ${differ.map((t) => `${t} ${before.get(t)} → ${after.get(t)}`).join(', ')}`);
  rmSync(exported, { recursive: true, force: true });
  writeFileSync(join(into, READY), JSON.stringify(Object.fromEntries(after)), { flush: true });
}

try {
  if (step === 'recover') await (await KuzuGraph.open(dir, { recoverApart: false })).close();
  else if (step === 'rebuild') await rebuild();
  else throw new Error(`unknown step ${String(step)}`);
  process.exit(0);
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
