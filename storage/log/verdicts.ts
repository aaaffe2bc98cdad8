// Every resolve answer is recorded as a verdict row: append-only and idempotent. The verdict's identity
// is a hash of the fact, the ruleset and the candidates it weighed (plus the outcome they led to), so
// asking the same question of the same evidence under the same rules records one verdict, not one per
// call. `as_of` is deliberately not part of it: it matters only through which candidates were known.
import { createHash } from 'node:crypto';
import type { Ledger } from './ledger.ts';
import type { Decision } from '../read/resolve.ts';
import type { TenantView } from '../read/tenant-view.ts';
import { formatInstant, type Micros } from '../time.ts';
import type { Declaration, NodeVersion, Verdict } from '../types.ts';

export interface VerdictInput {
  tenant: string;
  factKey: string;
  declaration: Declaration | null;
  validAt?: Micros | undefined;
  space?: string | undefined;
  decision: Decision;
  /** Who decided: the service and its version (never a model). */
  resolver: string;
}

export type VerdictDraft = Omit<Verdict, 'seq' | 'tseq' | 'decided_at' | 'known_at'>;

// Candidates by what they say and when, not by row hash (rows loaded from a bundle carry none). Rows
// never change, so each one's identity text is computed once.
const identities = new WeakMap<NodeVersion, string>();

function candidateIdentity(c: NodeVersion): string {
  let text = identities.get(c);
  if (text === undefined) {
    text = JSON.stringify([c.id, c.space, c.asserted_at, c.valid_from, c.valid_to, c.known_at, c.fact_value, c.payload]);
    identities.set(c, text);
  }
  return text;
}

/** The verdict a decision gives, without the instants the commit stamps. */
export function draftVerdict(input: VerdictInput): VerdictDraft {
  const d = input.declaration;
  const ruleset = {
    fact_key: input.factKey,
    declaration: d && {
      policy: d.policy,
      key_fields: d.key_fields,
      source_order: d.source_order,
      declared_at: formatInstant(d.declared_at),
    },
    valid_at: input.validAt === undefined ? null : formatInstant(input.validAt),
    space: input.space ?? null,
  };
  const chosen = input.decision.chosen;
  const outcome = input.decision.reason ?? 'answered';
  const value = chosen ? (chosen.fact_value ?? 'null') : null;
  const candidates = input.decision.candidates.map(candidateIdentity).sort();
  const rulesetText = JSON.stringify(ruleset);
  return {
    tenant: input.tenant,
    fact_key: input.factKey,
    target_id: chosen?.id ?? null,
    value,
    outcome,
    method: d?.policy ?? 'none',
    ruleset: rulesetText,
    resolver: input.resolver,
    space: input.space ?? null,
    hash: verdictHash(rulesetText, candidates, outcome, chosen?.id ?? null, value),
  };
}

// The ruleset text has a fixed key order (built here), and each identity is JSON text, so streaming them
// into the digest, one per line, is unambiguous without a canonical re-serialisation of the whole.
function verdictHash(ruleset: string, candidates: readonly string[], outcome: string, target: string | null, value: string | null): string {
  const h = createHash('sha256');
  h.update(ruleset)
    .update('\n')
    .update(JSON.stringify([outcome, target, value]))
    .update('\n');
  h.update(candidates.join('\n'));
  return h.digest('hex');
}

// Verdicts staged in a commit group that has not landed yet, per ledger and tenant (every view of a tenant
// holds its verdicts): two equal answers in one group must not both be written, and a view only learns of
// the first after the commit. Per ledger: two ledgers in one process (tests, a copy beside its source) may
// hold tenants of the same name.
const pending = new WeakMap<Ledger, Map<string, Set<string>>>();

/**
 * Records the verdict unless an equal one exists. Resolves once it is durable (or known to exist):
 * true when this call wrote it. Decided on the view of the verdict's space, or without one on the
 * tenant's rules view (its declarations and verdicts, none of its rows), held resident until then so
 * every verdict committed meanwhile reaches it.
 */
export function recordVerdict(ledger: Ledger, draft: VerdictDraft): Promise<boolean> {
  const decide = (view: TenantView): Promise<boolean> => record(ledger, view, draft);
  return draft.space === null ? ledger.withRules(draft.tenant, decide) : ledger.withView(draft.tenant, draft.space, decide);
}

async function record(ledger: Ledger, view: TenantView, draft: VerdictDraft): Promise<boolean> {
  if (view.hasVerdictHash(draft.hash)) return false;
  let tenants = pending.get(ledger);
  if (!tenants) pending.set(ledger, (tenants = new Map()));
  let set = tenants.get(draft.tenant);
  if (!set) tenants.set(draft.tenant, (set = new Set()));
  try {
    return await ledger.enqueue((stage) => {
      if (view.hasVerdictHash(draft.hash) || set.has(draft.hash)) return false;
      set.add(draft.hash);
      const seq = stage.nextSeq();
      stage.addVerdict({ ...draft, seq, tseq: seq, decided_at: stage.capturedAt, known_at: stage.capturedAt });
      return true;
    });
  } finally {
    // Once the group has settled the view holds the hash, or nothing was written and a retry may write it.
    set.delete(draft.hash);
  }
}
