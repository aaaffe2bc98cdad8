// Property, end to end: random fact histories written through POST /v1/memories (knowledge instants set
// by backfill declarations), declared through POST /v1/facts and resolved through POST /v1/resolve agree
// with the independent reference at several as_of and valid_at instants; a tie is never answered.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatInstant, OPEN_END, parseInstant } from '../storage/time.ts';
import { POLICIES } from '../storage/types.ts';
import { reference, type Row } from './helpers/resolve-reference.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

const DAY = 86_400_000_000;
const BASE = parseInstant('2021-01-01T00:00:00Z');
const SPACES = ['svc:a', 'svc:b', 'svc:c'];
let run = 0;

const historyArb = fc.record({
  rows: fc.array(
    fc.record({
      asserted: fc.integer({ min: 0, max: 9 }),
      validDelta: fc.integer({ min: 0, max: 2 }),
      length: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
      known: fc.integer({ min: 0, max: 3 }),
      space: fc.constantFrom(...SPACES),
      source: fc.option(fc.constantFrom(...SPACES), { nil: undefined }),
      value: fc.integer({ min: 0, max: 2 }),
    }),
    { minLength: 1, maxLength: 6 },
  ),
  policy: fc.constantFrom(...POLICIES),
  order: fc.shuffledSubarray(SPACES, { minLength: 1 }),
  space: fc.option(fc.constantFrom(...SPACES), { nil: undefined }),
});

describe('resolve over HTTP: property', () => {
  it('agrees with the reference on random fact histories', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb, async (h) => {
        const key = `fact-${++run}`;
        const rows: Row[] = [];
        for (let k = 0; k <= 3; k++) {
          const known = BASE + k * 3 * DAY;
          for (const space of SPACES) {
            const nodes = h.rows.flatMap((r, i) => {
              if (r.known !== k || r.space !== space) return [];
              const asserted = BASE + r.asserted * DAY,
                from = asserted + r.validDelta * DAY;
              const to = r.length === undefined ? OPEN_END : from + r.length * DAY;
              const payload = r.source === undefined ? {} : { source: r.source };
              rows.push({
                id: `${key}-${i}`,
                fact_value: JSON.stringify(r.value),
                known_at: known,
                asserted_at: asserted,
                valid_from: from,
                valid_to: to,
                payload: JSON.stringify(payload),
                space,
              });
              return [
                {
                  id: `${key}-${i}`,
                  kind: 'claim',
                  fact_key: key,
                  fact_value: r.value,
                  payload,
                  asserted_at: formatInstant(asserted),
                  valid_from: formatInstant(from),
                  valid_to: to === OPEN_END ? null : formatInstant(to),
                },
              ];
            });
            if (nodes.length === 0) continue;
            const w = await t.call('POST', '/v1/memories', {
              body: { space, nodes, backfill: { declared_captured_at: formatInstant(known), reason: 'property' } },
            });
            expect(w.json.accepted).toBe(nodes.length);
          }
        }
        await t.call('POST', '/v1/facts', { body: { fact_key: key, policy: h.policy, source_order: h.order } });
        const rulesAsOf = formatInstant(t.ledger.now());
        const scoped = h.space === undefined ? rows : rows.filter((r) => r.space === h.space);
        for (const asOfDay of [1, 4, 10]) {
          for (const validDay of [undefined, 3, 8]) {
            const asOf = BASE + asOfDay * DAY,
              validAt = validDay === undefined ? undefined : BASE + validDay * DAY;
            const r = await t.call('POST', '/v1/resolve', {
              body: {
                fact: key,
                as_of: formatInstant(asOf),
                rules_as_of: rulesAsOf,
                space: h.space,
                valid_at: validAt === undefined ? undefined : formatInstant(validAt),
              },
            });
            const want = reference({ policy: h.policy, source_order: h.order }, scoped, asOf, validAt);
            expect({
              status: r.json.status,
              reason: r.json.reason ?? null,
              value: r.json.value === undefined ? null : JSON.stringify(r.json.value),
            }).toEqual({ status: want.reason === null ? 'answered' : 'no_answer', reason: want.reason, value: want.value });
            expect(r.json.candidates.map((c: { id: string }) => c.id).sort()).toEqual(
              scoped
                .filter((x) => x.known_at <= asOf)
                .map((x) => x.id)
                .sort(),
            );
            expect(r.json.policy).toBe(h.policy);
          }
        }
      }),
      { numRuns: 12 },
    );
  }, 240_000);
});
