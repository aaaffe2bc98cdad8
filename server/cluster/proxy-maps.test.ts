import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { mapCommands, mapFileText, proxyMaps } from './proxy-maps.ts';

const hash = (key: string): string => createHash('sha256').update(key).digest('hex');
const place = (server: string, epoch = 1, state = 'active'): string => JSON.stringify({ server, epoch, state });
const SVC = 'svc:3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f';

describe('proxyMaps', () => {
  it('routes the hashes of placed tenants and their svc: spaces to their servers, frozen ones included', () => {
    const maps = proxyMaps({
      keys: new Map([
        [hash('ka'), 'alpha'],
        [hash('ka2'), 'alpha'],
        [hash('kb'), 'beta'],
        [hash('kc'), 'unplaced'],
      ]),
      placements: new Map([
        ['alpha', place('s1')],
        ['beta', place('s2', 3, 'frozen')],
      ]),
      spaces: new Map([
        [SVC, 'beta'],
        ['user:x', 'alpha'],
      ]),
    });
    expect(maps.keys).toEqual(
      new Map([
        [hash('ka'), 's1'],
        [hash('ka2'), 's1'],
        [hash('kb'), 's2'],
      ]),
    );
    expect(maps.spaces).toEqual(new Map([[SVC, 's2']]));
    expect(maps.skipped).toEqual([]);
  });

  it('leaves out, and reports, broken placements, bad server names and keys that are not hashes', () => {
    const maps = proxyMaps({
      keys: new Map([
        ['plain-key', 'alpha'],
        [hash('kb').toUpperCase(), 'beta'],
        [hash('kg'), 'gamma'],
      ]),
      placements: new Map([
        ['alpha', place('s1')],
        ['beta', '{"server":"s2"}'],
        ['gamma', place('s 1; del map x')],
      ]),
      spaces: new Map(),
    });
    expect(maps.keys.size).toBe(0);
    expect(maps.skipped).toHaveLength(4);
    expect(maps.skipped.join('\n')).toMatch(/plain-key/);
    expect(maps.skipped.join('\n')).toMatch(/beta/);
    expect(maps.skipped.join('\n')).toMatch(/gamma/);
  });
});

describe('mapCommands', () => {
  it('adds new keys, sets changed ones and deletes removed ones, nothing for unchanged', () => {
    const from = new Map([
      ['a', 's1'],
      ['b', 's2'],
      ['c', 's3'],
    ]);
    const to = new Map([
      ['a', 's1'],
      ['b', 's3'],
      ['d', 's2'],
    ]);
    expect(mapCommands('/m/keys.map', from, to)).toEqual(['set map /m/keys.map b s3', 'add map /m/keys.map d s2', 'del map /m/keys.map c']);
    expect(mapCommands('/m/keys.map', to, to)).toEqual([]);
  });
  it('writes a map file sorted by key, so an unchanged map gives the same file', () => {
    const text = mapFileText(
      new Map([
        ['b', 's2'],
        ['a', 's1'],
      ]),
    );
    expect(text).toBe('a s1\nb s2\n');
  });
});
