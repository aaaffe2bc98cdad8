import { z } from 'zod';
import { identKey } from '../storage/commit-group.ts';
import type { Ledger } from '../storage/log/ledger.ts';
import { latestDeclaration, sameRules } from '../storage/read/facts.ts';
import type { TenantView } from '../storage/read/tenant-view.ts';
import { formatInstant } from '../storage/time.ts';
import { POLICIES, type Declaration, type Policy } from '../storage/types.ts';
import { defineOperation } from './operation.ts';
import { DeclareFactOutputSchema } from './output-schemas.ts';

const FactKey = z.string().min(1).max(512);

/**
 * Declarations staged in a commit group that has not landed yet, by tenant and fact key: two equal
 * declarations in one group must not both be written, and the view learns of the first only after the
 * commit (as verdicts' `pending` in storage/log/verdicts.ts).
 */
const stagedBy = new WeakMap<Ledger, Map<string, Declaration>>();

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
    // Checked on the tenant's rules view (its declarations, none of its rows), never the whole tenant.
    const declared = await ctx.ledger.withRules(ctx.tenant, async (view) => {
      const current = latestDeclaration(view, input.fact_key);
      if (current && sameRules(current, content)) return current;
      return declare(view);
    });
    return { declared: shown(declared) };

    async function declare(view: TenantView): Promise<Declaration> {
      const key = identKey(ctx.tenant, input.fact_key);
      let staged = stagedBy.get(ctx.ledger);
      if (!staged) stagedBy.set(ctx.ledger, (staged = new Map()));
      const pending = staged;
      let mine: Declaration | undefined;
      try {
        return await ctx.ledger.enqueue((stage): Declaration => {
          // A declaration staged in this commit group reaches the view only once the group lands.
          const current = pending.get(key) ?? latestDeclaration(view, input.fact_key);
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
          pending.set(key, (mine = row));
          return row;
        });
      } finally {
        // Once the group has settled the view holds it, or nothing was written.
        if (mine && pending.get(key) === mine) pending.delete(key);
      }
    }
  },
});
