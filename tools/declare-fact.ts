import { z } from 'zod';
import { latestDeclaration, sameRules } from '../storage/read/facts.ts';
import type { TenantView } from '../storage/read/tenant-view.ts';
import { formatInstant } from '../storage/time.ts';
import { POLICIES, type Declaration, type Policy } from '../storage/types.ts';
import { defineOperation } from './operation.ts';
import { DeclareFactOutputSchema } from './output-schemas.ts';

const FactKey = z.string().min(1).max(512);

export const DeclareFactInput = z
  .strictObject({
    fact_key: FactKey.describe('The fact being declared; nodes carrying this fact_key are its candidate values.'),
    key_fields: z.array(z.string().min(1).max(256)).max(64).default([]).describe('Fields identifying one instance of the fact.'),
    policy: z
      .enum(POLICIES as [Policy, ...Policy[]])
      .default('latest_valid')
      .describe('latest_valid (default), latest_observed, source_priority (by source_order) or strict (refuse on two candidates).'),
    source_order: z
      .array(z.string().min(1).max(512))
      .min(1)
      .max(256)
      .optional()
      .describe('Sources, most trusted first; required for source_priority. A source is payload.source, else the space.'),
  })
  .superRefine((v, c) => {
    if (v.policy === 'source_priority' && v.source_order === undefined) {
      c.addIssue({ code: 'custom', path: ['source_order'], message: 'required when policy is source_priority' });
    }
  });

export interface DeclaredFact {
  fact_key: string;
  key_fields: string[];
  policy: Policy;
  source_order: string[] | null;
  declared_at: string;
}

const shown = (d: Declaration): DeclaredFact => ({
  fact_key: d.fact_key,
  key_fields: d.key_fields,
  policy: d.policy,
  source_order: d.source_order,
  declared_at: formatInstant(d.declared_at),
});

export const declareFact = defineOperation({
  name: 'declare_fact',
  title: 'Declare a fact',
  description:
    'Declare a named fact and the policy that chooses among its candidate values (nodes written with this fact_key), from now on. Re-declaring the same rules changes nothing. Tenant-wide.',
  input: DeclareFactInput,
  output: DeclareFactOutputSchema,
  requiresAsOf: false,
  // Declarations are the tenant's rules, not rows of a space: runOperation refuses them at an address
  // confined to one space (possibly one opened by its address alone).
  confinable: false,
  rest: { method: 'POST', path: '/v1/facts', from: 'body' },
  // Re-declaring the same rules returns the declaration in force and writes nothing.
  effect: { readOnly: false, destructive: false, idempotent: true },
  async handler(input, ctx): Promise<{ declared: DeclaredFact }> {
    const content = { key_fields: input.key_fields, policy: input.policy, source_order: input.source_order ?? null };
    const declared = await ctx.ledger.withView(ctx.tenant, undefined, async (view) => {
      const current = latestDeclaration(view, input.fact_key);
      if (current && sameRules(current, content)) return current;
      return declare(view);
    });
    return { declared: shown(declared) };

    function declare(view: TenantView): Promise<Declaration> {
      return ctx.ledger.enqueue((stage): Declaration => {
        const current = latestDeclaration(view, input.fact_key);
        if (current && sameRules(current, content)) return current;
        const seq = stage.nextSeq();
        const row: Declaration = {
          seq,
          tseq: seq,
          tenant: ctx.tenant,
          fact_key: input.fact_key,
          ...content,
          declared_at: stage.capturedAt,
        };
        stage.addDeclaration(row);
        return row;
      });
    }
  },
});
