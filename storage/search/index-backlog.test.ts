// What the index holds in memory when writes outrun it: live commits past the queue's bound wait for a
// batch to take a page (the ledger commits nothing more meanwhile), and commits arriving during a catch-up
// past the bound are let go and read from the store instead. Counted in rows, never timed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Ledger } from '../log/ledger.ts';
import { LocalEmbedder } from './embed/local-embedder.ts';
import { gatedIndexSource } from '../../test/helpers/gated-index-source.ts';
import { SearchIndex } from './search-index.ts';

const PAGE = 8;
let dir: string;
let ledger: Ledger;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'index-backlog-'));
  ledger = await Ledger.open(join(dir, 'data'));
});

afterEach(async () => {
  await ledger.close();
  rmSync(dir, { recursive: true, force: true });
});

const write = (n: number) =>
  ledger.write('t', {
    space: 's',
    nodes: Array.from({ length: 4 }, (_, i) => ({ id: `w${n}-${i}`, kind: 'claim', statement: `Harbour crane ${n} ${i} broke down` })),
    edges: [],
  });

/** Writes one after another in the background, each once the last is acknowledged. */
function writeInTurn(count: number): { acked: () => number; done: Promise<void> } {
  let acked = 0;
  const done = (async () => {
    for (let n = 0; n < count; n++) {
      await write(n);
      acked++;
    }
  })();
  return { acked: () => acked, done };
}

/** Lets the event loop and the engines run for a while: progress, not time, is asserted after it. */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 40; i++) await new Promise((r) => setTimeout(r, 5));
};

async function seqsIndexed(at: string): Promise<number[]> {
  const db = await lancedb.connect(join(at, 'tables'));
  try {
    const table = await db.openTable(`t_${Buffer.from('t').toString('hex')}`);
    const rows = (await table.query().select(['seq']).toArray()) as { seq: number }[];
    table.close();
    return rows.map((r) => Number(r.seq)).sort((a, b) => a - b);
  } finally {
    db.close();
  }
}

describe('rows the index holds while writes outrun it', () => {
  it('holds at most its bound and one commit: later commits wait for a batch, then every row is indexed', async () => {
    const { source, open, hold } = gatedIndexSource(ledger, 'gate');
    const at = join(dir, 'search');
    const index = await SearchIndex.open(at, new LocalEmbedder(), source, null, PAGE, {}, PAGE);
    await index.caughtUp();
    await hold();
    const writes = writeInTurn(10);
    await settle();
    // The batch holding the gate's rows waits; behind it, two writes of 4 rows filled the page.
    expect(index.status().pendingRows).toBeLessThanOrEqual(PAGE + 4);
    expect(writes.acked()).toBeLessThan(10);
    open();
    await writes.done;
    await index.caughtUp('t');
    expect(await seqsIndexed(at)).toHaveLength(2 + 10 * 4);
    await index.close();
  });

  it('lets every waiting write go on once it is closed, and holds none after', async () => {
    const { source, hold } = gatedIndexSource(ledger, 'gate');
    const index = await SearchIndex.open(join(dir, 'search'), new LocalEmbedder(), source, null, PAGE, {}, PAGE);
    await index.caughtUp();
    await hold();
    const writes = writeInTurn(6);
    await settle();
    expect(writes.acked()).toBeLessThan(6);
    // The gate stays shut: the batch under way is left to the next start (after CLOSE_WAIT_MS).
    await index.close();
    await writes.done;
    expect(writes.acked()).toBe(6);
  });

  it('does not hold writes up during a catch-up: commits past the bound are read from the store, each once', async () => {
    const { source, open, hold } = gatedIndexSource(ledger, 'gate');
    await hold();
    for (let n = 100; n < 103; n++) await write(n);
    const at = join(dir, 'search');
    const index = await SearchIndex.open(at, new LocalEmbedder(), source, null, PAGE, {}, PAGE);
    // The catch-up's first page holds the gate's rows: it waits there while six writes land.
    const writes = writeInTurn(6);
    await writes.done;
    expect(index.status().pendingRows).toBeLessThanOrEqual(2 * PAGE + 4);
    open();
    await index.caughtUp('t');
    const seqs = await seqsIndexed(at);
    expect(seqs).toHaveLength(2 + 3 * 4 + 6 * 4);
    expect(new Set(seqs).size).toBe(seqs.length);
    await index.close();
  });
});
