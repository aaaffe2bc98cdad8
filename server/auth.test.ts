import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tenantResolver } from './auth.ts';
import { bearerToken, KeyRing } from './auth.ts';
import { ConfigError, readConfig } from './config.ts';

describe('KeyRing', () => {
  const ring = new KeyRing(
    new Map([
      ['k-one', 'alpha'],
      ['k-two', 'beta'],
    ]),
  );
  it('maps each key to its tenant', () => {
    expect(ring.tenantOf('k-one')).toBe('alpha');
    expect(ring.tenantOf('k-two')).toBe('beta');
  });
  it('refuses unknown keys, prefixes and case variants', () => {
    for (const k of ['', 'k-on', 'k-one ', 'K-ONE', 'k-onek-two', 'alpha']) expect(ring.tenantOf(k), k).toBeNull();
  });
});

describe('bearer tokens', () => {
  it('reads the token of a Bearer header in any case', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer   abc  ')).toBe('abc');
  });
  it('gives null for anything else', () => {
    for (const h of [undefined, null, '', 'Bearer', 'Bearer ', 'Basic abc', 'abc', 'Token abc']) expect(bearerToken(h)).toBeNull();
  });
});

describe('key configuration', () => {
  it('is open with SVC_TENANT when no keys are set', () => {
    const config = readConfig({ SVC_TENANT: 'solo' });
    expect(config.apiKeys).toBeNull();
    expect(tenantResolver(config)(undefined)).toBe('solo');
    expect(tenantResolver(config)('Bearer whatever')).toBe('solo');
  });
  it('reads key=tenant pairs', () => {
    const config = readConfig({ SVC_API_KEYS: 'a=t1, b=t2' });
    const resolve = tenantResolver(config);
    expect(resolve('Bearer a')).toBe('t1');
    expect(resolve('Bearer b')).toBe('t2');
    expect(resolve('Bearer c')).toBeNull();
    expect(resolve(undefined)).toBeNull();
  });
  it('reads SVC_API_KEYS_FILE and merges it with SVC_API_KEYS', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keys-'));
    const file = join(dir, 'keys.json');
    writeFileSync(file, JSON.stringify({ 'file-key': 'from-file' }));
    const resolve = tenantResolver(readConfig({ SVC_API_KEYS_FILE: file, SVC_API_KEYS: 'env-key=from-env' }));
    expect(resolve('Bearer file-key')).toBe('from-file');
    expect(resolve('Bearer env-key')).toBe('from-env');
    expect(tenantResolver(readConfig({ SVC_API_KEYS_FILE: file }))('Bearer file-key')).toBe('from-file');
  });
  it('stops with a message naming the variable on a bad setting', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keys-'));
    const bad = (name: string, text: string): string => {
      const p = join(dir, name);
      writeFileSync(p, text);
      return p;
    };
    expect(() => readConfig({ SVC_API_KEYS: 'novalue' })).toThrow(/SVC_API_KEYS/);
    expect(() => readConfig({ SVC_API_KEYS: '=t' })).toThrow(ConfigError);
    expect(() => readConfig({ SVC_API_KEYS_FILE: join(dir, 'missing.json') })).toThrow(/SVC_API_KEYS_FILE/);
    expect(() => readConfig({ SVC_API_KEYS_FILE: bad('a.json', '[1]') })).toThrow(/SVC_API_KEYS_FILE/);
    expect(() => readConfig({ SVC_API_KEYS_FILE: bad('b.json', '{"k": 3}') })).toThrow(/SVC_API_KEYS_FILE/);
    expect(() => readConfig({ SVC_API_KEYS_FILE: bad('c.json', 'not json') })).toThrow(/SVC_API_KEYS_FILE/);
    expect(() => readConfig({ SVC_API_KEYS_FILE: bad('d.json', '{}') })).toThrow(/holds no key/);
  });
});
