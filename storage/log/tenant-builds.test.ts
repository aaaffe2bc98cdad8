// Structures taken back from what the last close saved are read while the server already answers: a commit
// landing meanwhile must end up in the structure taken, or a filter of held ids would call its id absent.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TenantBuilds, type TenantBuilt } from './tenant-builds.ts';

class Keys implements TenantBuilt<string> {
  constructor(readonly keys = new Set<string>()) {}
  get bytes(): number {
    return 8 * this.keys.size;
  }
  add(key: string): number {
    this.keys.add(key);
    return 8;
  }
}

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: Error) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function commit(builds: TenantBuilds<string, Keys>, items: [string, string][]): void {
  const to = builds.committer();
  for (const [tenant, key] of items) to?.add(tenant, key);
  to?.done();
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('structures taken back while the server answers', () => {
  it('adds what commits brought during the read, and starts no build meanwhile', async () => {
    const reads: string[] = [];
    const builds = new TenantBuilds<string, Keys>(
      'keys',
      async (tenant) => {
        reads.push(tenant);
        return new Keys();
      },
      1 << 20,
    );
    const reading = deferred<Iterable<[string, Keys]> | null>();
    builds.take(reading.promise);
    // Asked during the read: not ready, and the store is not read for them (the saved ones may be on their way).
    expect(builds.ready('a')).toBeNull();
    expect(builds.ready('b')).toBeNull();
    expect(reads).toEqual([]);
    commit(builds, [
      ['a', 'during-1'],
      ['b', 'during-2'],
      ['a', 'during-3'],
    ]);
    reading.resolve([['a', new Keys(new Set(['saved']))]]);
    await builds.taken();
    expect([...(builds.ready('a', false)?.keys ?? [])].sort()).toEqual(['during-1', 'during-3', 'saved']);
    expect(builds.adopted).toBe(1);
    // b, asked during the read, had nothing saved: built from the store once the read ended (the store holds
    // its commit), not from the items kept; a, taken back, is never read from the store.
    await builds.settled('b');
    expect(reads).toEqual(['b']);
    expect(builds.ready('b', false)?.keys.size).toBe(0);
  });

  it('keeps commits after the read in the structure taken, and takes nothing of a tenant dropped during it', async () => {
    const builds = new TenantBuilds<string, Keys>('keys', async () => new Keys(), 1 << 20);
    const reading = deferred<Iterable<[string, Keys]> | null>();
    builds.take(reading.promise);
    commit(builds, [['gone', 'x']]);
    builds.drop('gone');
    reading.resolve([
      ['gone', new Keys(new Set(['old']))],
      ['kept', new Keys(new Set(['saved']))],
    ]);
    await builds.taken();
    expect(builds.ready('gone', false)).toBeNull();
    commit(builds, [['kept', 'after']]);
    expect([...(builds.ready('kept', false)?.keys ?? [])].sort()).toEqual(['after', 'saved']);
  });

  it('after a failed read, builds from the store as if nothing was saved', async () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const builds = new TenantBuilds<string, Keys>('keys', async () => new Keys(new Set(['from-store'])), 1 << 20);
    const reading = deferred<Iterable<[string, Keys]> | null>();
    builds.take(reading.promise);
    reading.reject(new Error('unreadable'));
    await builds.taken();
    expect(error).toHaveBeenCalledOnce();
    expect(builds.ready('a')).toBeNull();
    await builds.settled('a');
    expect([...(builds.ready('a', false)?.keys ?? [])]).toEqual(['from-store']);
    expect(builds.adopted).toBe(0);
  });
});
