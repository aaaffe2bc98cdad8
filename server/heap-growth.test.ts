import { describe, expect, it } from 'vitest';
import { ConfigError, readConfig } from './config.ts';
import { applyHeapGrowth, describeMemory, HEAP_GROWTH_DEFAULT } from './heap-growth.ts';

describe('SVC_HEAP_GROWTH_PERCENT', () => {
  it('defaults to a fixed growing factor and takes 0 (V8 decides) up to 300', () => {
    expect(readConfig({}).heapGrowthPercent).toBe(HEAP_GROWTH_DEFAULT);
    expect(readConfig({ SVC_HEAP_GROWTH_PERCENT: '0' }).heapGrowthPercent).toBe(0);
    expect(readConfig({ SVC_HEAP_GROWTH_PERCENT: '300' }).heapGrowthPercent).toBe(300);
  });
  it('stops the server with a message naming the variable on a bad value', () => {
    for (const bad of ['301', '-1', '1.5', 'half']) {
      expect(() => readConfig({ SVC_HEAP_GROWTH_PERCENT: bad })).toThrow(ConfigError);
      expect(() => readConfig({ SVC_HEAP_GROWTH_PERCENT: bad })).toThrow(/SVC_HEAP_GROWTH_PERCENT/);
    }
  });
});

describe('applyHeapGrowth', () => {
  it("leaves a growing factor given on node's command line alone", () => {
    expect(applyHeapGrowth(50, ['--heap-growing-percent=20'])).toMatch(/command line/);
  });
  it("says when V8's own heuristics are kept", () => {
    expect(applyHeapGrowth(0, [])).toMatch(/V8's own heuristics/);
  });
  it('names the setting in the start-up line with every other memory bound', () => {
    const growth = applyHeapGrowth(HEAP_GROWTH_DEFAULT, []);
    const line = describeMemory({
      growth,
      memoryMb: 256,
      kuzuBufferMb: 256,
      spaceCopiesMb: 64,
      vectorMirrorsMb: 256,
      lanceCachesMb: 320,
      idPlacesMb: 64,
      indexQueueRows: 131072,
    });
    expect(line).toMatch(/at most 50% past/);
    for (const name of [
      'SVC_MEMORY_MB',
      'SVC_SEARCH_SPACES_MB',
      'SVC_INDEX_QUEUE_ROWS',
      'SVC_SEARCH_VECTORS_MB',
      'SVC_ID_PLACES_MB',
      'SVC_KUZU_BUFFER_MB',
      'SVC_HEAP_GROWTH_PERCENT',
    ])
      expect(line).toContain(name);
    expect(line).toMatch(/V8 heap limit \d+ MB/);
  });
});
