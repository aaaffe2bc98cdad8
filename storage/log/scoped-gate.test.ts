import { describe, expect, it } from 'vitest';
import { emptyGroup } from '../commit-group.ts';
import type { Declaration, Invalidation, NodeVersion } from '../types.ts';
import { groupScope, overlaps, ScopedGate, spacesOf, wholeTenant, type GateScope } from './scoped-gate.ts';

/** A job that records when it starts and ends, and ends only when told. */
function job(log: string[], name: string): { fn: () => Promise<void>; end: () => void } {
  let end!: () => void;
  const ended = new Promise<void>((r) => (end = r));
  return {
    fn: async () => {
      log.push(`${name}+`);
      await ended;
      log.push(`${name}-`);
    },
    end,
  };
}

const turns = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

describe('scopes', () => {
  it('meet on a shared space of the same tenant, on a whole tenant, and on everything', () => {
    const cases: [GateScope, GateScope, boolean][] = [
      [spacesOf('t', ['a']), spacesOf('t', ['b']), false],
      [spacesOf('t', ['a', 'b']), spacesOf('t', ['c', 'b']), true],
      [spacesOf('t', ['a']), spacesOf('u', ['a']), false],
      [wholeTenant('t'), spacesOf('t', ['a']), true],
      [wholeTenant('t'), spacesOf('u', ['a']), false],
      ['all', spacesOf('u', []), true],
    ];
    for (const [a, b, meet] of cases) {
      expect(overlaps(a, b)).toBe(meet);
      expect(overlaps(b, a)).toBe(meet);
    }
  });

  it("a group's scope is its rows' spaces, the spaces holding its invalidations, and the whole tenant of a rule", () => {
    const group = emptyGroup();
    group.nodes.push({ tenant: 't', space: 'a' } as NodeVersion);
    const inv = { tenant: 't', space: 'b' } as Invalidation;
    group.invalidations.push(inv);
    group.invalidationSpaces.push({ space: 'c', row: inv });
    const scope = groupScope(group);
    for (const s of ['a', 'b', 'c']) expect(overlaps(scope, spacesOf('t', [s]))).toBe(true);
    expect(overlaps(scope, spacesOf('t', ['d']))).toBe(false);
    expect(overlaps(scope, spacesOf('u', ['a']))).toBe(false);
    group.declarations.push({ tenant: 'u' } as Declaration);
    expect(overlaps(groupScope(group), spacesOf('u', ['anything']))).toBe(true);
  });
});

describe('the gate', () => {
  it('runs jobs whose scopes meet one after another in arrival order, and others side by side', async () => {
    const gate = new ScopedGate();
    const log: string[] = [];
    const loadA = job(log, 'loadA');
    const commitB = job(log, 'commitB');
    const commitA = job(log, 'commitA');
    const tenant = job(log, 'tenant');
    const runs = [
      gate.run(spacesOf('t', ['a']), loadA.fn),
      gate.run(spacesOf('t', ['b']), commitB.fn),
      gate.run(spacesOf('t', ['a', 'c']), commitA.fn),
      gate.run(wholeTenant('t'), tenant.fn),
    ];
    await turns();
    expect(log).toEqual(['loadA+', 'commitB+']);
    commitB.end();
    await turns();
    // The whole tenant's job waits for commitA, given before it, which waits for loadA.
    expect(log).toEqual(['loadA+', 'commitB+', 'commitB-']);
    loadA.end();
    await turns();
    expect(log.slice(3)).toEqual(['loadA-', 'commitA+']);
    commitA.end();
    await turns();
    expect(log.slice(5)).toEqual(['commitA-', 'tenant+']);
    tenant.end();
    await Promise.all(runs);
    expect(gate.pending).toBe(0);
  });

  it('a job that fails lets the jobs after it run, and its caller gets the failure', async () => {
    const gate = new ScopedGate();
    const failed = gate.run('all', () => Promise.reject(new Error('boom')));
    const after = gate.run(spacesOf('t', ['a']), () => Promise.resolve('ran'));
    await expect(failed).rejects.toThrow('boom');
    await expect(after).resolves.toBe('ran');
  });
});
