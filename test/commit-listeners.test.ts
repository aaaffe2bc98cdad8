// Read-your-writes across the ledger's commit listeners: every listener (the search index, placement) is
// told of a commit before the write resolves to its caller's continuation, whatever another listener
// awaits. Placement awaits a read of the store for a new `svc:` space; the index, told after it, missed
// the acknowledged write a search could ask for meanwhile.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { Ledger } from '../storage/log/ledger.ts';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const claim = (id: string) => ({ space: 's', nodes: [{ id, kind: 'claim', statement: `claim ${id}` }], edges: [] });

it('tells every commit listener before the write resolves, whatever an earlier listener awaits', async () => {
  dir = mkdtempSync(join(tmpdir(), 'commit-listeners-'));
  const ledger = await Ledger.open(join(dir, 'data'));
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const slow: string[] = [];
  const fast: string[] = [];
  ledger.onCommit(async (group) => {
    await gate;
    slow.push(...group.nodes.map((n) => n.id));
  });
  ledger.onCommit((group) => {
    fast.push(...group.nodes.map((n) => n.id));
  });
  await ledger.write('t', claim('x1'));
  expect(fast).toEqual(['x1']);
  expect(slow).toEqual([]);
  release();
  await ledger.write('t', claim('x2'));
  expect(fast).toEqual(['x1', 'x2']);
  await new Promise((resolve) => setImmediate(resolve));
  expect(slow).toEqual(['x1', 'x2']);
  await ledger.close();
});
