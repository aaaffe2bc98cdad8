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

describe('SVC_JOURNAL_COPY_ROWS', () => {
  it('is refused at start, naming the variable, unless a whole number of at least 100 rows', () => {
    expect(() => readConfig({ SVC_JOURNAL_COPY_ROWS: '64000' })).not.toThrow();
    for (const bad of ['99', '0', '1.5', 'many', '-5']) {
      expect(() => readConfig({ SVC_JOURNAL_COPY_ROWS: bad })).toThrow(ConfigError);
      expect(() => readConfig({ SVC_JOURNAL_COPY_ROWS: bad })).toThrow(/SVC_JOURNAL_COPY_ROWS/);
    }
  });
});

describe('SVC_ID_PLACES_MB', () => {
  it('is refused at start, naming the variable, unless a whole number of megabytes (0 turns the tables off)', () => {
    expect(readConfig({}).idPlacesMb).toBe(64);
    for (const good of ['0', '64', '512']) expect(readConfig({ SVC_ID_PLACES_MB: good }).idPlacesMb).toBe(Number(good));
    for (const bad of ['1.5', 'many', '-5']) {
      expect(() => readConfig({ SVC_ID_PLACES_MB: bad })).toThrow(ConfigError);
      expect(() => readConfig({ SVC_ID_PLACES_MB: bad })).toThrow(/SVC_ID_PLACES_MB/);
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

describe('SVC_SEARCH_EXACT_ROWS', () => {
  it('takes 0 or a whole number of rows and refuses anything else, naming the variable', () => {
    for (const good of ['0', '20000', '1000000']) expect(() => readConfig({ SVC_SEARCH_EXACT_ROWS: good })).not.toThrow();
    for (const bad of ['-1', '2.5', 'all']) expect(() => readConfig({ SVC_SEARCH_EXACT_ROWS: bad })).toThrow(/SVC_SEARCH_EXACT_ROWS/);
  });
});

describe('SVC_SERVER_ID and SVC_ETCD', () => {
  it('leave a server as on one machine when unset', () => {
    expect(readConfig({}).etcd).toBeNull();
    expect(readConfig({}).serverId).toBeNull();
  });
  it('read etcd URLs and the staleness bound', () => {
    const c = readConfig({ SVC_SERVER_ID: 's1', SVC_ETCD: 'http://127.0.0.1:2379, http://127.0.0.2:2379', SVC_ETCD_STALE_MS: '500' });
    expect(c.etcd).toEqual({ hosts: ['http://127.0.0.1:2379', 'http://127.0.0.2:2379'], staleMs: 500, advertiseUrl: null });
    expect(c.serverId).toBe('s1');
  });
  it('refuse etcd without a server id, a bad URL, a bad bound or a server id HAProxy cannot name', () => {
    expect(() => readConfig({ SVC_ETCD: 'http://127.0.0.1:2379' })).toThrow(/SVC_SERVER_ID/);
    expect(() => readConfig({ SVC_SERVER_ID: 's1', SVC_ETCD: '127.0.0.1:2379' })).toThrow(/SVC_ETCD/);
    expect(() => readConfig({ SVC_SERVER_ID: 's1', SVC_ETCD: 'http://e:2379', SVC_ETCD_STALE_MS: 'soon' })).toThrow(/SVC_ETCD_STALE_MS/);
    expect(() => readConfig({ SVC_SERVER_ID: 'server one' })).toThrow(/SVC_SERVER_ID/);
    expect(() => readConfig({ SVC_SERVER_ID: 's1', SVC_ETCD: 'http://e:2379', SVC_ADVERTISE_URL: '10.0.0.2:8787' })).toThrow(
      /SVC_ADVERTISE_URL/,
    );
  });
  it('read the advertised URL without a trailing slash', () => {
    const c = readConfig({ SVC_SERVER_ID: 's1', SVC_ETCD: 'http://e:2379', SVC_ADVERTISE_URL: 'http://10.0.0.2:8787/' });
    expect(c.etcd?.advertiseUrl).toBe('http://10.0.0.2:8787');
  });
});

describe('SVC_LISTEN_BACKLOG', () => {
  it("defaults to 4096, above Node's 511, so a burst of connections is queued by the kernel rather than dropped", () => {
    expect(readConfig({}).listenBacklog).toBe(4096);
    expect(readConfig({ SVC_LISTEN_BACKLOG: '1024' }).listenBacklog).toBe(1024);
  });
  it('refuses anything but a whole number from 1 to 65535, naming the variable', () => {
    for (const bad of ['0', '65536', '1.5', 'many', '-3'])
      expect(() => readConfig({ SVC_LISTEN_BACKLOG: bad })).toThrow(/SVC_LISTEN_BACKLOG/);
  });
});

describe('SVC_LISTEN_SOCKETS', () => {
  it('defaults to 32 sockets on the port and takes 1 (a plain listen) to 256', () => {
    expect(readConfig({}).listenSockets).toBe(32);
    expect(readConfig({ SVC_LISTEN_SOCKETS: '1' }).listenSockets).toBe(1);
    expect(readConfig({ SVC_LISTEN_SOCKETS: '256' }).listenSockets).toBe(256);
  });
  it('refuses anything else, naming the variable', () => {
    for (const bad of ['0', '257', '2.5', 'wide']) expect(() => readConfig({ SVC_LISTEN_SOCKETS: bad })).toThrow(/SVC_LISTEN_SOCKETS/);
  });
});
