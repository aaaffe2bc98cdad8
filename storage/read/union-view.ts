// What a write is planned against when its tenant's view is not resident: the views of the spaces holding
// the ids the request names (and of the request's own space), read as one. A row is held by its own
// space's view only, so versions and edges come from one view each; an invalidation is held by every
// space holding its node, so those are kept once. Only what the write and invalidation planners ask.
import type { EdgeRecord, Invalidation, NodeVersion } from '../types.ts';
import type { TenantView } from './tenant-view.ts';

/** The reads a write's plan makes of the committed rows (see Overlay in storage/log/write-plan.ts). */
export type PlanView = Pick<TenantView, 'versionsOf' | 'edgesFrom' | 'edgesTo' | 'invalidationsOf' | 'edgeByIdentity' | 'hasEdgeHash'>;

const NONE: readonly never[] = Object.freeze([]);

/** The lists of each view joined in commit order; without a copy when at most one is not empty. */
function joined<R extends { seq: number }>(lists: readonly (readonly R[])[]): readonly R[] {
  const full = lists.filter((l) => l.length > 0);
  if (full.length <= 1) return full[0] ?? NONE;
  return full.flat().sort((a, b) => a.seq - b.seq);
}

export class UnionView implements PlanView {
  constructor(readonly views: TenantView[]) {}

  /** Adds the view of one more space (a commit since the lookup brought a named id into it). */
  add(view: TenantView): void {
    this.views.push(view);
  }

  versionsOf(id: string): readonly NodeVersion[] {
    return joined(this.views.map((v) => v.versionsOf(id)));
  }

  edgesFrom(id: string): readonly EdgeRecord[] {
    return joined(this.views.map((v) => v.edgesFrom(id)));
  }

  edgesTo(id: string): readonly EdgeRecord[] {
    return joined(this.views.map((v) => v.edgesTo(id)));
  }

  invalidationsOf(id: string): readonly Invalidation[] {
    const all = joined(this.views.map((v) => v.invalidationsOf(id)));
    return all.filter((row, i) => i === 0 || all[i - 1]!.seq !== row.seq);
  }

  edgeByIdentity(key: string): EdgeRecord | undefined {
    for (const v of this.views) {
      const e = v.edgeByIdentity(key);
      if (e) return e;
    }
    return undefined;
  }

  hasEdgeHash(hash: string): boolean {
    return this.views.some((v) => v.hasEdgeHash(hash));
  }
}
