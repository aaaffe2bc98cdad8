// The index's threads are lowered, nothing else is: on Linux, LanceDB's threads of this process end at
// the nice value asked for while the event loop's thread keeps its own.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { getPriority } from 'node:os';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lowerIndexThreads } from './index-priority.ts';
import { LanceIndex } from './lance-index.ts';

const dir = mkdtempSync(join(tmpdir(), 'index-priority-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const threads = (): { tid: number; name: string }[] =>
  readdirSync('/proc/self/task').map((t) => ({ tid: Number(t), name: readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim() }));

describe.runIf(existsSync('/proc/self/task'))('index thread priority', () => {
  it("lowers LanceDB's threads to the nice value and leaves the event loop's thread alone", async () => {
    const index = await LanceIndex.open(join(dir, 'tables'), 4);
    await index.add('t', [
      {
        id: 'a',
        seq: 1,
        space: 's',
        kind: 'claim',
        category: null,
        known_at: 1,
        asserted_at: 1,
        valid_from: 0,
        valid_to: 9e15,
        text: 'harbour crane',
        vector: new Float32Array([1, 0, 0, 0]),
      },
    ]);
    const lance = threads().filter((t) => t.name === 'lance-cpu' || t.name === 'tokio-rt-worker');
    expect(lance.length).toBeGreaterThan(0);
    const mainBefore = getPriority(process.pid);
    expect(lowerIndexThreads(5)).toBeGreaterThan(0);
    for (const t of lance) expect(getPriority(t.tid)).toBe(5);
    expect(getPriority(process.pid)).toBe(mainBefore);
    expect(lowerIndexThreads(5)).toBe(0); // already there
    await index.close();
  });
});
