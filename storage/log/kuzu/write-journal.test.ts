// The write journal on its own: appends survive a reopen in order, a torn or corrupt record ends the replay
// (nothing after it is trusted), sealing starts a new segment so appends go on during a copy, and release
// deletes only what was copied.
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeRecord, readSegment, WriteJournal, type JournalRecord } from './write-journal.ts';

const rec = (n: number): JournalRecord => ({ tables: [{ table: 'Block', rows: [[n, `text ${n}\n"quoted"`, null, 1.5]] }] });
const segs = (dir: string): string[] =>
  readdirSync(dir)
    .filter((f) => f.startsWith('journal-'))
    .sort();

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'journal-test-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('WriteJournal', () => {
  it('keeps appended records across a reopen, in order, and counts their rows', async () => {
    const j = WriteJournal.open(dir);
    for (let n = 1; n <= 3; n++) await j.append(rec(n));
    expect(j.pendingRows).toBe(3);
    await j.close(); // as a crash would leave it: nothing taken, nothing released
    const again = WriteJournal.open(dir);
    expect(again.pendingRows).toBe(3);
    const { records, segments } = await again.take();
    expect(records).toEqual([rec(1), rec(2), rec(3)]);
    expect(segments).toBe(1); // the old segment; the new active one is empty and stays open
    await again.close();
  });

  it('counts the encoded bytes it holds, recovered records included, and frees them on release', async () => {
    const j = WriteJournal.open(dir);
    await j.append(rec(1));
    const big = rec(2);
    await j.append(big, encodeRecord(big)); // encoded by the caller, as the graph store does
    const bytes = encodeRecord(rec(1)).length + encodeRecord(rec(2)).length;
    expect(j.pendingBytes).toBe(bytes);
    await j.close();
    const again = WriteJournal.open(dir);
    expect(again.pendingBytes).toBe(bytes);
    await again.append(rec(3));
    const taken = await again.take();
    again.release(taken.segments);
    expect(again.pendingBytes).toBe(0);
    expect(again.pendingRows).toBe(0);
    await again.close();
  });

  it('seals on take: appends after it go to a new segment, and release deletes only the sealed ones', async () => {
    const j = WriteJournal.open(dir);
    await j.append(rec(1));
    const taken = await j.take();
    await j.append(rec(2)); // during the copy of rec(1)
    expect(segs(dir)).toHaveLength(2);
    j.release(taken.segments);
    expect(segs(dir)).toHaveLength(1);
    expect(j.pendingRows).toBe(1);
    expect((await j.take()).records).toEqual([rec(2)]);
    await j.close();
  });

  it('a failed copy releases nothing: the next take returns the same records and the new ones', async () => {
    const j = WriteJournal.open(dir);
    await j.append(rec(1));
    await j.take(); // copy fails: no release
    await j.append(rec(2));
    const second = await j.take();
    expect(second.records).toEqual([rec(1), rec(2)]);
    j.release(second.segments);
    expect(j.pendingRows).toBe(0);
    await j.close();
  });

  it('stops the replay at a torn record and at a record whose checksum fails', async () => {
    const torn = join(dir, 'journal-0000000001.log');
    writeFileSync(torn, Buffer.concat([encodeRecord(rec(1)), encodeRecord(rec(2)).subarray(0, 12)]));
    expect(readSegment(torn)).toEqual([rec(1)]);

    const corrupt = join(dir, 'journal-0000000002.log');
    const second = encodeRecord(rec(2));
    second.writeUInt8(second.readUInt8(second.length - 2) ^ 0xff, second.length - 2); // a flipped byte in the body
    writeFileSync(corrupt, Buffer.concat([encodeRecord(rec(1)), second, encodeRecord(rec(3))]));
    expect(readSegment(corrupt)).toEqual([rec(1)]);

    appendFileSync(join(dir, 'journal-0000000003.log'), '');
    const j = WriteJournal.open(dir);
    expect(j.pendingRows).toBe(2);
    expect(readFileSync(torn).length).toBeGreaterThan(0);
    await j.close();
  });

  it('never seals a segment under an fdatasync in flight: an append racing a take succeeds and is kept', async () => {
    for (let round = 0; round < 20; round++) {
      const j = WriteJournal.open(dir);
      const first = j.append(rec(1));
      const taking = j.take(); // waits for the first append's sync
      let second: Promise<void> | undefined;
      void first.then(() => {
        second = j.append(rec(2)); // starts while the take is still waiting
      });
      const taken = await taking;
      await first;
      await second;
      const rest = await j.take();
      const all = [...taken.records, ...rest.records.filter((r) => !taken.records.includes(r))];
      expect(all).toEqual([rec(1), rec(2)]);
      expect(j.failure).toBeNull();
      j.release(rest.segments);
      await j.close();
    }
  });

  it('refuses appends once closed', async () => {
    const j = WriteJournal.open(dir);
    await j.close();
    await expect(j.append(rec(1))).rejects.toThrow(/closed/);
  });
});
