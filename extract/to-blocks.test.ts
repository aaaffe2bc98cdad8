import { describe, expect, it } from 'vitest';
import { TenantView } from '../storage/read/tenant-view.ts';
import { OPEN_END } from '../storage/time.ts';
import type { NodeVersion } from '../storage/types.ts';
import { normaliseStatement, planMessages, SpaceIndex } from './to-blocks.ts';
import type { Extraction } from './types.ts';

const T = 1_700_000_000_000_000;
const x = (over: Partial<Extraction> = {}): Extraction => ({
  blocks: [
    { kind: 'prediction', statement: 'Prices will rise' },
    { kind: 'claim', statement: 'Demand spikes' },
  ],
  entities: ['Acme Power'],
  links: [{ cause: 1, effect: 0, type: 'CAUSES', mechanism: 'because demand spikes' }],
  ...over,
});
const msg = (index: number, at: number, content = 'Prices will rise because demand spikes.') => ({
  index,
  content,
  observedAt: at,
  source: 'chat',
});

function row(id: string, kind: string, statement: string, knownAt: number, space = 'user:a'): NodeVersion {
  return {
    seq: 1,
    tseq: 1,
    tenant: 't',
    id,
    space,
    kind,
    statement,
    category: null,
    payload: '{}',
    asserted_at: knownAt,
    valid_from: knownAt,
    valid_to: OPEN_END,
    captured_at: knownAt,
    known_at: knownAt,
    batch_id: null,
    fact_key: null,
    fact_value: null,
    hash: `h-${id}`,
  };
}

describe('planMessages', () => {
  it('writes an episode, blocks, entities, DERIVED_FROM, MENTIONS and the causal edge, all at observed_at', () => {
    const plan = planMessages('user:a', new SpaceIndex(new TenantView('t'), 'user:a'), [{ message: msg(0, T), extraction: x() }]);
    const kinds = plan.nodes.map((n) => n.kind);
    expect(kinds).toEqual(['episode', 'prediction', 'claim', 'entity']);
    expect(plan.nodes.every((n) => n.asserted_at === T)).toBe(true);
    const [ep, p, c, e] = plan.nodes.map((n) => n.id!);
    expect(plan.edges.map((d) => [d.source_id, d.target_id, d.edge_type])).toEqual([
      [p, ep, 'DERIVED_FROM'],
      [c, ep, 'DERIVED_FROM'],
      [ep, e, 'MENTIONS'],
      [c, p, 'CAUSES'],
    ]);
    expect(plan.edges.every((d) => d.asserted_at === T)).toBe(true);
    expect(plan.episodes).toEqual([
      {
        message: 0,
        episode_id: ep,
        observed_at: '2023-11-14T22:13:20.000000Z',
        blocks: [p, c],
        entities: [e],
        edges: plan.edges.map((d) => ({ source_id: d.source_id, target_id: d.target_id, edge_type: d.edge_type })),
      },
    ]);
  });

  it('ids depend on the space and the normalised statement only', () => {
    const a = planMessages('user:a', new SpaceIndex(new TenantView('t'), 'user:a'), [{ message: msg(0, T), extraction: x() }]);
    const again = planMessages('user:a', new SpaceIndex(new TenantView('t'), 'user:a'), [
      {
        message: msg(0, T + 5),
        extraction: x({
          blocks: [
            { kind: 'prediction', statement: 'prices  will RISE.' },
            { kind: 'claim', statement: 'Demand spikes' },
          ],
        }),
      },
    ]);
    const other = planMessages('user:b', new SpaceIndex(new TenantView('t'), 'user:b'), [{ message: msg(0, T), extraction: x() }]);
    expect(again.nodes[1]!.id).toBe(a.nodes[1]!.id);
    expect(again.nodes[0]!.id).not.toBe(a.nodes[0]!.id); // another episode
    expect(other.nodes[1]!.id).not.toBe(a.nodes[1]!.id);
    expect(normaliseStatement('  Prices  will RISE!!  ')).toBe('prices will rise');
  });

  it('resolves onto rows known at observed_at, and never onto rows known later', () => {
    const view = new TenantView('t');
    view.addNode(row('known-claim', 'claim', 'Demand spikes.', T - 10));
    view.addNode(row('later-entity', 'entity', 'Acme Power', T + 10));
    view.addNode(row('other-space', 'entity', 'Acme Power', T - 10, 'user:b'));
    const index = new SpaceIndex(view, 'user:a');
    expect([...index.entityNamesAt(T)]).toEqual([]);
    expect([...index.entityNamesAt(T + 10)]).toEqual(['acme power']);
    const plan = planMessages('user:a', index, [{ message: msg(0, T), extraction: x() }]);
    expect(plan.episodes[0]!.blocks).toContain('known-claim');
    expect(plan.nodes.map((n) => n.id)).not.toContain('known-claim');
    expect(plan.resolved).toEqual(['known-claim']);
    expect(plan.episodes[0]!.entities).not.toContain('later-entity');
    expect(plan.episodes[0]!.entities).not.toContain('other-space');
  });

  it('a later message of the request resolves onto what an earlier one staged', () => {
    const plan = planMessages('user:a', new SpaceIndex(new TenantView('t'), 'user:a'), [
      { message: msg(0, T), extraction: x() },
      { message: msg(1, T + 1, 'again'), extraction: x() },
    ]);
    expect(plan.nodes.filter((n) => n.kind !== 'episode')).toHaveLength(3);
    expect(plan.episodes[1]!.blocks).toEqual(plan.episodes[0]!.blocks);
    expect(plan.episodes[1]!.entities).toEqual(plan.episodes[0]!.entities);
    expect(plan.resolved).toEqual([]);
  });
});
