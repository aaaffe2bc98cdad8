import { z } from 'zod';
import type { Certificate } from '../storage/read/certificate.ts';
import { declarationInForce } from '../storage/read/facts.ts';
import { decide, sourceOf, type Decision, type Reason } from '../storage/read/resolve.ts';
import type { Snapshot } from '../storage/read/snapshot.ts';
import { formatInstant, formatNullableEnd, type Micros } from '../storage/time.ts';
import type { Declaration, NodeVersion, Policy } from '../storage/types.ts';
import { draftVerdict, recordVerdict } from '../storage/log/verdicts.ts';
import { defineOperation } from './operation.ts';
import { lensOf } from './read.ts';
import { AsOf, SpaceName, ValidAt, atInstant } from './schemas.ts';
import { ResolveFactOutputSchema } from './output-schemas.ts';

export const ResolveFactInput = z.strictObject({
  fact: z.string().min(1).max(512).describe('The declared fact_key to resolve.'),
  as_of: AsOf,
  valid_at: ValidAt.optional().describe(
    'Only candidates in force at this content instant compete. Omitted: every candidate known at as_of competes.',
  ),
  rules_as_of: AsOf.optional().describe('Apply the declaration in force at this instant instead of at as_of.'),
  space: SpaceName.optional().describe('Only candidates of this space. Omitted: the whole tenant.'),
});

export interface Candidate {
  id: string;
  value: unknown;
  space: string;
  asserted_at: string;
  valid: { from: string; to: string | null };
  known_at: string;
  source: string;
  superseded_by: string[];
}

export interface ResolveFactOutput {
  status: 'answered' | 'no_answer';
  value?: unknown;
  reason?: Reason;
  policy: Policy | null;
  candidates: Candidate[];
  certificate: Certificate;
}

// Rows never change, so the text of a candidate (its instants and source) is formatted once per row; a
// fact with many candidates is resolved again and again. Each answer still gets its own objects.
const formatted = new WeakMap<NodeVersion, Omit<Candidate, 'value' | 'superseded_by'>>();

function candidate(n: NodeVersion, supersededBy: string[]): Candidate {
  let f = formatted.get(n);
  if (!f) {
    f = {
      id: n.id,
      space: n.space,
      asserted_at: formatInstant(n.asserted_at),
      valid: { from: formatInstant(n.valid_from), to: formatNullableEnd(n.valid_to) },
      known_at: formatInstant(n.known_at),
      source: sourceOf(n),
    };
    formatted.set(n, f);
  }
  return {
    id: f.id,
    value: n.fact_value === null ? null : (JSON.parse(n.fact_value) as unknown),
    space: f.space,
    asserted_at: f.asserted_at,
    valid: { ...f.valid },
    known_at: f.known_at,
    source: f.source,
    superseded_by: supersededBy,
  };
}

export const resolveFact = defineOperation({
  name: 'resolve_fact',
  title: 'Resolve a declared fact',
  description:
    'Choose the value of a declared fact as known at as_of by its declared policy (the ledger decides, never a model). status answered gives the value; no_answer gives a reason (undeclared_fact, no_data, not_yet, no_value_at, unresolved_conflict). Candidates are attached; the answer is recorded as a verdict.',
  input: ResolveFactInput,
  output: ResolveFactOutputSchema,
  requiresAsOf: true,
  confinable: true,
  rest: { method: 'POST', path: '/v1/resolve', from: 'body' },
  // Each answer is recorded as a verdict; the same fact, candidates and rules give the same verdict once.
  effect: { readOnly: false, destructive: false, idempotent: true },
  async handler(input, ctx): Promise<ResolveFactOutput> {
    // Without a space, answered from the views of the spaces holding the fact's rows and what they link
    // to (Ledger.readByFact); the answer may run more than once, so it only reads, and the verdict is
    // recorded after it.
    const { out, decision, declaration, validAt } = await ctx.ledger.readByFact(ctx.tenant, lensOf(input), input.rules_as_of, (snap) =>
      answerOver(snap, input),
    );
    await recordVerdict(
      ctx.ledger,
      draftVerdict({
        tenant: ctx.tenant,
        factKey: input.fact,
        declaration,
        validAt,
        space: input.space,
        decision,
        resolver: `svc/${ctx.services.version}`,
      }),
    );
    return out;
  },
});

/** The answer over one snapshot: its declaration in force, candidates, decision and certificate. */
function answerOver(
  snap: Snapshot,
  input: z.infer<typeof ResolveFactInput>,
): { out: ResolveFactOutput; decision: Decision; declaration: Declaration | null; validAt: Micros | undefined } {
  const { asOf, validAt } = snap.lens;
  const rulesAsOf = input.rules_as_of === undefined ? undefined : atInstant(input.rules_as_of, snap.txAsOf);
  const declaration = declarationInForce(snap.view, input.fact, rulesAsOf ?? asOf);
  const pool = snap.factCandidates(input.fact);
  const decision = decide(declaration, pool.rows, { asOf, validAt });
  const out: ResolveFactOutput = {
    status: decision.chosen ? 'answered' : 'no_answer',
    policy: declaration?.policy ?? null,
    candidates: decision.candidates.map((c) => candidate(c, snap.supersededBy(c.id))),
    certificate: snap.certificate({
      masked: { node: decision.masked },
      fact: input.fact,
      rulesAsOf,
      invalidated: pool.invalidated,
      shownBatches: decision.candidates.map((c) => c.batch_id),
    }),
  };
  if (decision.chosen) out.value = decision.chosen.fact_value === null ? null : (JSON.parse(decision.chosen.fact_value) as unknown);
  else if (decision.reason) out.reason = decision.reason;
  return { out, decision, declaration, validAt };
}
