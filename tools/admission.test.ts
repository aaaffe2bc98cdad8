import { describe, expect, it } from 'vitest';
import { readConfig } from '../server/config.ts';
import { Admission, admissionLimits, describeLimits } from './admission.ts';
import { SvcError } from './errors.ts';
import { heavyOperationNames, operationNamed } from './index.ts';
import { deadlineCutsWork, isHeavy, laneOf } from './operation.ts';

describe('admission limits from the environment', () => {
  it('defaults, and every value named in the start-up line', () => {
    const l = admissionLimits({});
    expect(l.maxHeavy).toBeGreaterThanOrEqual(2);
    expect(l.heavyQueue).toBe(16 * l.maxHeavy);
    expect(l.perKeyQueue).toBeLessThanOrEqual(l.heavyQueue);
    const line = describeLimits(
      admissionLimits({ SVC_MAX_HEAVY: '3', SVC_HEAVY_QUEUE: '7', SVC_REQUEST_TIMEOUT_MS: '1234' }),
      heavyOperationNames,
    );
    expect(line).toContain(
      '(remember with messages or over 200 rows, search_memory without a space, or in a space not searched in memory now (a small one excepted), why, export_ledger, list_spaces without a space)',
    );
    expect(line).toContain('3 heavy operations at once');
    expect(l.maxSearches).toBeGreaterThanOrEqual(4);
    expect(describeLimits(admissionLimits({ SVC_MAX_SEARCHES: '5' }), heavyOperationNames)).toContain('5 other searches at once');
    expect(line).toContain('queue 7 (4 per key,');
    expect(line).toContain('deadline 1234 ms');
    expect(line).toContain('expected wait ≤ 1000 ms');
  });

  it('a bad value stops start-up with a message naming the variable', () => {
    expect(() => readConfig({ SVC_MAX_HEAVY: '0' })).toThrow(/SVC_MAX_HEAVY: expected a whole number from 1/);
    expect(() => readConfig({ SVC_MAX_SEARCHES: 'four' })).toThrow(/SVC_MAX_SEARCHES: expected a whole number from 1/);
    expect(() => readConfig({ SVC_HEAVY_QUEUE: 'lots' })).toThrow(/SVC_HEAVY_QUEUE: .*"lots"/);
    expect(() => readConfig({ SVC_HEAVY_QUEUE: '4', SVC_HEAVY_QUEUE_PER_KEY: '5' })).toThrow(/SVC_HEAVY_QUEUE_PER_KEY: 5 is more than/);
    expect(() => readConfig({ SVC_MAX_HEAVY: '8', SVC_MAX_REQUESTS: '4' })).toThrow(/SVC_MAX_REQUESTS/);
    expect(() => readConfig({ SVC_REQUEST_TIMEOUT_MS: '5.5' })).toThrow(/SVC_REQUEST_TIMEOUT_MS/);
    expect(() => readConfig({ SVC_HEAVY_MAX_WAIT_MS: '-1' })).toThrow(/SVC_HEAVY_MAX_WAIT_MS/);
  });
});

describe('which operations are heavy', () => {
  it('searches, why and export always; a write only with messages or as a bulk import', () => {
    const heavy = (name: string, input: Record<string, unknown>): boolean => isHeavy(operationNamed(name), input);
    expect(heavy('search_memory', {})).toBe(true);
    expect(heavy('search_memory', { space: 'user:1' })).toBe(true);
    // A space whose search copy is in memory is searched as cheaply as a list; another space is not.
    const held = { searchIsLight: (space: string) => space === 'user:1' };
    expect(isHeavy(operationNamed('search_memory'), { space: 'user:1' }, held)).toBe(false);
    expect(isHeavy(operationNamed('search_memory'), { space: 'user:2' }, held)).toBe(true);
    expect(isHeavy(operationNamed('search_memory'), {}, held)).toBe(true);
    // Not heavy, a search still takes a search slot; nothing else does.
    expect(laneOf(operationNamed('search_memory'), { space: 'user:1' }, held)).toBe('search');
    expect(laneOf(operationNamed('search_memory'), { space: 'user:2' }, held)).toBe('heavy');
    expect(laneOf(operationNamed('list_memories'), { space: 'user:1' }, held)).toBe('light');
    expect(laneOf(operationNamed('get_memory'), {}, held)).toBe('light');
    expect(laneOf(operationNamed('remember'), { nodes: [{}] }, held)).toBe('light');
    expect(heavy('why', {})).toBe(true);
    expect(heavy('export_ledger', {})).toBe(true);
    expect(heavy('list_memories', {})).toBe(false);
    expect(heavy('list_spaces', {})).toBe(true);
    expect(heavy('list_spaces', { space: 'user:1' })).toBe(false);
    expect(heavy('remember', { nodes: [{}] })).toBe(false);
    expect(heavy('remember', { messages: [] })).toBe(true);
    expect(heavy('remember', { nodes: Array.from({ length: 201 }, () => ({})) })).toBe(true);
    expect(heavy('remember', { nodes: Array.from({ length: 200 }, () => ({})) })).toBe(false);
  });
});

describe('what a deadline cuts short', () => {
  it('reads are answered at their deadline; writes and exports run to the end', () => {
    const cuts = (name: string): boolean => deadlineCutsWork(operationNamed(name));
    expect(cuts('search_memory')).toBe(true);
    expect(cuts('list_memories')).toBe(true);
    expect(cuts('remember')).toBe(false);
    expect(cuts('export_ledger')).toBe(false);
  });
});

describe('the gate', () => {
  const limits = {
    maxHeavy: 1,
    maxSearches: 1,
    heavyQueue: 10,
    perKeyQueue: 10,
    maxRequests: 5,
    requestTimeoutMs: 60_000,
    maxWaitMs: 60_000,
  };

  it('serves tenants round-robin: each waiting tenant gets a turn before any gets a second', async () => {
    const gate = new Admission({ ...limits, maxRequests: 100 });
    const first = await gate.admit('x', 'heavy');
    const order: string[] = [];
    const wait = (tenant: string, i: number) =>
      gate.admit(tenant, 'heavy').then((a) => {
        order.push(`${tenant}${i}`);
        a.release();
      });
    const all = [wait('a', 1), wait('a', 2), wait('a', 3), wait('b', 1), wait('c', 1), wait('b', 2)];
    first.release();
    await Promise.all(all);
    expect(order).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
  });

  it('refuses at once a heavy request whose expected wait is past the bound, counting it as shed', async () => {
    const gate = new Admission({ ...limits, maxRequests: 100, maxWaitMs: 120 });
    const running = await gate.admit('a', 'heavy');
    // The mean service time starts at 50 ms: two waiting are expected to wait 100 ms, a third 150 ms.
    const waiting = [gate.admit('a', 'heavy'), gate.admit('b', 'heavy')];
    const refused = await gate.admit('c', 'heavy').catch((e: unknown) => e);
    expect((refused as SvcError).code).toBe('overloaded');
    expect((refused as SvcError).message).toMatch(/expected wait for a turn \(150 ms\)/);
    expect(gate.stats()).toMatchObject({ heavyQueued: 2, shed: 1 });
    running.release();
    for (const w of waiting) (await w).release();
  });

  it('light operations never queue but count against the ceiling on requests in flight', async () => {
    const gate = new Admission(limits);
    const held = await Promise.all(Array.from({ length: 5 }, () => gate.admit('a', 'light')));
    const refused = await gate.admit('a', 'light').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SvcError);
    expect((refused as SvcError).code).toBe('overloaded');
    expect((refused as SvcError).retryAfter).toBeGreaterThanOrEqual(1);
    held[0]?.release();
    held[0]?.release(); // a second release is ignored
    expect(gate.stats().inFlight).toBe(4);
    await expect(gate.admit('a', 'light')).resolves.toBeDefined();
  });

  it('takes searches that are not heavy in turns of their own: the rest wait, lights and heavy operations do not', async () => {
    const gate = new Admission({ ...limits, maxSearches: 2, maxRequests: 100 });
    const running = [await gate.admit('a', 'search'), await gate.admit('b', 'search')];
    const order: string[] = [];
    const waiting = ['a', 'a', 'b'].map((tenant, i) =>
      gate.admit(tenant, 'search').then((s) => {
        order.push(`${tenant}${i}`);
        return s;
      }),
    );
    expect(gate.stats()).toMatchObject({ searchesRunning: 2, searchesQueued: 3, heavyRunning: 0 });
    // Neither a list nor a heavy operation waits for the searches' slots.
    const light = await gate.admit('a', 'light');
    const heavy = await gate.admit('a', 'heavy');
    expect(gate.stats()).toMatchObject({ heavyRunning: 1, searchesQueued: 3 });
    running[0]!.release();
    running[1]!.release();
    const started = await Promise.all([waiting[0]!, waiting[2]!]);
    // Round-robin between keys: b's search goes before a's second.
    expect(order).toEqual(['a0', 'b2']);
    for (const s of started) s.release();
    (await waiting[1]!).release();
    expect(order).toEqual(['a0', 'b2', 'a1']);
    light.release();
    heavy.release();
    expect(gate.stats()).toMatchObject({ inFlight: 0, searchesRunning: 0, searchesQueued: 0 });
  });

  it('a waiting search past its deadline leaves the queue, answered deadline_exceeded', async () => {
    const gate = new Admission({ ...limits, maxRequests: 100 });
    const running = await gate.admit('a', 'search');
    const controller = new AbortController();
    const waiting = gate.admit('a', 'search', controller.signal).catch((e: unknown) => e);
    controller.abort();
    expect(((await waiting) as SvcError).code).toBe('deadline_exceeded');
    expect(gate.stats()).toMatchObject({ searchesQueued: 0, timedOut: 1, inFlight: 1 });
    running.release();
    expect(gate.stats().inFlight).toBe(0);
  });

  /** What a gate watcher was told last: each lane's crowded value, and each lane's share per tenant. */
  function recorder() {
    const last = new Map<string, number>();
    const watch = {
      crowded: (lane: string, retryAfterS: number) => void last.set(lane, retryAfterS),
      share: (lane: string, tenant: string, retryAfterS: number) => void last.set(`${lane} ${tenant}`, retryAfterS),
    };
    return { last, watch };
  }

  it("tells the gate each lane's state at every change, and refuses a search unread only when both lanes would", async () => {
    const gate = new Admission({ ...limits, heavyQueue: 1, perKeyQueue: 1, maxRequests: 100 });
    const { last, watch } = recorder();
    gate.watchSearchGate(watch);
    expect(last).toEqual(
      new Map([
        ['heavy', 0],
        ['searches', 0],
      ]),
    );
    const heavy = await gate.admit('a', 'heavy');
    const heavyWaiting = gate.admit('b', 'heavy');
    expect(last.get('heavy')).toBeGreaterThanOrEqual(1);
    // The heavy lane is full; a search in memory would still go by its own lane.
    expect(gate.refusal(false, true)).toBeNull();
    const search = await gate.admit('a', 'search');
    const searchWaiting = gate.admit('b', 'search');
    expect(last.get('searches')).toBeGreaterThanOrEqual(1);
    const shed = gate.stats().shed;
    const refused = gate.refusal(false, true);
    expect(refused?.code).toBe('overloaded');
    expect(refused?.retryAfter).toBe(Math.max(last.get('heavy') ?? 0, last.get('searches') ?? 0));
    expect(gate.stats().shed).toBe(shed + 1);
    // A list is not a search: let through.
    expect(gate.refusal(false, false)).toBeNull();
    search.release();
    (await searchWaiting).release();
    expect(last.get('searches')).toBe(0);
    expect(gate.refusal(false, true)).toBeNull();
    heavy.release();
    (await heavyWaiting).release();
    expect(last.get('heavy')).toBe(0);
  });

  it("refuses a key's search unread when its share of both lanes' queues is full, 429, while another key's is read", async () => {
    const gate = new Admission({ ...limits, heavyQueue: 4, perKeyQueue: 1, maxRequests: 100 });
    const { last, watch } = recorder();
    gate.watchSearchGate(watch);
    const held = [await gate.admit('a', 'heavy'), await gate.admit('a', 'search')];
    const waiting = [gate.admit('a', 'heavy'), gate.admit('a', 'search')];
    expect(last.get('heavy a')).toBeGreaterThanOrEqual(1);
    expect(last.get('searches a')).toBeGreaterThanOrEqual(1);
    expect(last.get('heavy')).toBe(0);
    const refused = gate.refusal(false, true, 'a');
    expect(refused?.code).toBe('over_share');
    expect(refused?.retryAfter).toBeGreaterThanOrEqual(1);
    expect(gate.refusal(false, true, 'b')).toBeNull();
    for (const h of held) h.release();
    for (const w of waiting) (await w).release();
    expect(last.get('heavy a')).toBe(0);
    expect(last.get('searches a')).toBe(0);
    expect(gate.refusal(false, true, 'a')).toBeNull();
  });

  it('tells the gate when a slot is given back with nobody waiting (a wait bound of 0: any wait is too long)', async () => {
    const gate = new Admission({ ...limits, maxWaitMs: 0, maxRequests: 100 });
    const { last, watch } = recorder();
    gate.watchSearchGate(watch);
    const heavy = await gate.admit('a', 'heavy');
    const search = await gate.admit('a', 'search');
    expect(last.get('searches')).toBeGreaterThanOrEqual(1);
    search.release();
    expect(last.get('searches')).toBe(0);
    heavy.release();
  });
});
