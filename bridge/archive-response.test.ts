import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Archive } from '../tools/archive.ts';
import { SvcError } from '../tools/errors.ts';
import { archiveResponse } from './archive-response.ts';

function fakeArchive(chunks: string[], fail = false): Archive & { disposed: number } {
  const a = {
    kind: 'archive' as const,
    filename: 'ledger-a"b-1.tar.gz',
    mediaType: 'application/gzip' as const,
    disposed: 0,
    open: () =>
      Readable.from(
        (async function* () {
          for (const c of chunks) yield Buffer.from(c);
          if (fail) throw new Error('disk gone');
        })(),
      ),
    dispose: async () => {
      a.disposed++;
    },
  };
  return a;
}

describe('archiveResponse', () => {
  it('streams the bytes with gzip headers and disposes once the body is read', async () => {
    const a = fakeArchive(['ab', 'cd']);
    const res = archiveResponse(a);
    expect(res.headers.get('content-type')).toBe('application/gzip');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="ledger-a_b-1.tar.gz"');
    expect(a.disposed).toBe(0);
    expect(await res.text()).toBe('abcd');
    expect(a.disposed).toBe(1);
  });

  it('disposes when the client goes away or the archive fails', async () => {
    const a = fakeArchive(['x', 'y', 'z']);
    const reader = archiveResponse(a).body?.getReader();
    await reader?.read();
    await reader?.cancel();
    expect(a.disposed).toBe(1);
    const broken = fakeArchive(['x'], true);
    await expect(archiveResponse(broken).text()).rejects.toThrow();
    expect(broken.disposed).toBe(1);
  });

  it('refuses a result that is not an archive', () => {
    expect(() => archiveResponse({ items: [] })).toThrow(SvcError);
  });
});
