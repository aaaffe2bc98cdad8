import { describe, expect, it } from 'vitest';
import { ConfigError, readConfig } from './config.ts';

describe('SVC_KUZU_BUFFER_MB', () => {
  it("defaults to a bounded pool, not Kuzu's share of RAM", () => {
    expect(readConfig({}).kuzuBufferMb).toBe(256);
  });
  it('takes a whole number of megabytes', () => {
    expect(readConfig({ SVC_KUZU_BUFFER_MB: '64' }).kuzuBufferMb).toBe(64);
  });
  it('stops the server with a message naming the variable on a bad value', () => {
    for (const bad of ['abc', '8', '1.5', '-1']) {
      expect(() => readConfig({ SVC_KUZU_BUFFER_MB: bad })).toThrow(ConfigError);
      expect(() => readConfig({ SVC_KUZU_BUFFER_MB: bad })).toThrow(/SVC_KUZU_BUFFER_MB/);
    }
  });
});

describe('SVC_MEMORY_MB', () => {
  it('defaults to 256 and takes a whole number of megabytes', () => {
    expect(readConfig({}).memoryMb).toBe(256);
    expect(readConfig({ SVC_MEMORY_MB: '300' }).memoryMb).toBe(300);
  });
  it('refuses what is not a whole number of at least 1', () => {
    for (const bad of ['0', '1.5', 'lots', '-20']) expect(() => readConfig({ SVC_MEMORY_MB: bad })).toThrow(ConfigError);
  });
});

describe('SVC_INDEX_NICE', () => {
  it('defaults to 0 (off) and takes up to 19', () => {
    expect(readConfig({}).indexNice).toBe(0);
    expect(readConfig({ SVC_INDEX_NICE: '10' }).indexNice).toBe(10);
    expect(readConfig({ SVC_INDEX_NICE: '0' }).indexNice).toBe(0);
    expect(readConfig({ SVC_INDEX_NICE: '19' }).indexNice).toBe(19);
  });
  it('refuses anything else, naming the variable', () => {
    for (const bad of ['20', '-1', '2.5', 'low']) expect(() => readConfig({ SVC_INDEX_NICE: bad })).toThrow(/SVC_INDEX_NICE/);
  });
});
