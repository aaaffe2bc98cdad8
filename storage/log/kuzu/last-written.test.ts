// The store's latest written, read above remembered floors: exact whatever the floors file holds, and
// without a whole column's scan when the floors are reached.
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KuzuGraph } from './kuzu-graph.ts';
import { LAST_WRITTEN_FILE, lastWritten, readFloors } from './last-written.ts';
import { emptyGroup } from '../../commit-group.ts';
import { OPEN_END } from '../../time.ts';
import type { NodeVersion } from '../../types.ts';

const dir = mkdtempSync(join(tmpdir(), 'last-written-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const AT = 1_700_000_000_000_000;

function node(seq: number, tseq: number, capturedAt: number): NodeVersion {
  return {
    seq,
    tseq,
    tenant: 'a',
    id: `n${seq}`,
    space: 's',
    kind: 'claim',
    statement: `row ${seq}`,
    category: null,
    payload: '{}',
    asserted_at: capturedAt,
    valid_from: capturedAt,
    valid_to: OPEN_END,
    captured_at: capturedAt,
    known_at: capturedAt,
    batch_id: null,
    fact_key: null,
    fact_value: null,
    hash: 'ab'.repeat(32),
  };
}

/** A fake engine: each statement's answer by whether it asks above a floor; the statements kept. */
function engine(above: number | null, whole: number | null): { max: (s: string) => Promise<number | null>; asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    max: async (statement) => {
      asked.push(statement);
      return statement.includes('WHERE') ? above : whole;
    },
  };
}

describe('the latest written, from floors', () => {
  it('asks each column above its floor, and nothing whole when every floor is reached', async () => {
    const floors = readFloors(join(dir, 'none'));
    expect(floors).toEqual({});
    const first = engine(null, 90);
    const { floors: found } = await lastWritten(first.max, floors);
    expect(first.asked.every((s) => !s.includes('WHERE'))).toBe(true);
    // Batch's clock and tseq, then clock, tseq and seq of the five tables with a seq.
    expect(first.asked).toHaveLength(17);
    const again = engine(95, 90);
    const { last } = await lastWritten(again.max, found);
    expect(again.asked).toHaveLength(17);
    expect(again.asked.every((s) => s.includes('WHERE') && s.includes('>= 90'))).toBe(true);
    expect(last).toEqual({ instant: 95, seq: 95, tseq: 95 });
  });

  it('reads the column whole when no row reaches its floor, and never answers with the floor', async () => {
    const fake = engine(null, 7);
    const { last } = await lastWritten(fake.max, { 'Block.seq': 1e12, 'Block.captured_at': 4e15 });
    expect(last).toEqual({ instant: 7, seq: 7, tseq: 7 });
    expect(fake.asked.filter((s) => s.includes('WHERE'))).toHaveLength(2);
  });
});

describe("the store's latest written across opens", () => {
  const expected = { instant: AT + 300, seq: 41, tseq: 900 };
  const write = async (at: string): Promise<void> => {
    const graph = await KuzuGraph.open(at, { journalMaxRows: 0 });
    await graph.commit({ ...emptyGroup(), nodes: [node(40, 40, AT + 100), node(41, 900, AT + 300), node(12, 12, AT + 200)] });
    await graph.close();
  };
  const latest = async (at: string): Promise<unknown> => {
    const graph = await KuzuGraph.open(at);
    try {
      return await graph.lastWritten();
    } finally {
      await graph.close();
    }
  };

  it('leaves the maxima it found beside the store, and reads the same through them', async () => {
    const at = join(dir, 'saved');
    await write(at);
    expect(readFloors(at)).toMatchObject({ 'Block.seq': 41, 'Block.tseq': 900, 'Block.captured_at': AT + 300 });
    expect(await latest(at)).toEqual(expected);
  });

  it('is exact whatever the file says: floors too high, too low, or a damaged file', async () => {
    const at = join(dir, 'wrong');
    await write(at);
    const file = join(at, LAST_WRITTEN_FILE);
    writeFileSync(file, JSON.stringify({ 'Block.seq': 1e12, 'Block.tseq': 1e12, 'Block.captured_at': AT * 10 }));
    expect(await latest(at)).toEqual(expected);
    writeFileSync(file, JSON.stringify({ 'Block.seq': 1, 'Block.tseq': 1, 'Block.captured_at': 1 }));
    expect(await latest(at)).toEqual(expected);
    writeFileSync(file, '{"Block.seq": 4');
    expect(await latest(at)).toEqual(expected);
    rmSync(file);
    expect(await latest(at)).toEqual(expected);
    expect(existsSync(file)).toBe(true);
  });
});
