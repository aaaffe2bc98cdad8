// The view a search without a space ranks over when the tenant's view is not resident: the views of the
// spaces holding the ids it reads (versions and edges, noted and loaded round by round as for a read by
// id), and the tenant's lists for what a search reads of the whole tenant (invalidations, SUPERSEDES
// edges, entity names, the latest block instant), which the ledger keeps without loading the tenant.
// Every read answered from the lists is the whole tenant's, so it is not noted: it needs no space loaded.
import { SpacesByIdView } from './read-by-id.ts';
import type { TenantLists } from './tenant-lists.ts';
import type { TenantView } from './tenant-view.ts';
import type { EdgeRecord, Invalidation, NodeVersion } from '../types.ts';

export class SpacesSearchView extends SpacesByIdView {
  readonly #lists: TenantLists;

  constructor(tenant: string, views: readonly TenantView[], lists: TenantLists) {
    super(tenant, views);
    this.#lists = lists;
  }

  override invalidationsOf(id: string): readonly Invalidation[] {
    return this.#lists.invalidationsOf(id);
  }

  override invalidations(): readonly Invalidation[] {
    return this.#lists.invalidations();
  }

  override supersedingEdges(id: string): readonly EdgeRecord[] {
    return this.#lists.supersedingEdges(id);
  }

  override supersedesEdges(): readonly EdgeRecord[] {
    return this.#lists.supersedesEdges();
  }

  override latestBlockKnownAt(): number {
    return this.#lists.latestBlockKnownAt();
  }

  override entitySource(): { nodesIn(): readonly NodeVersion[] } {
    return this.#lists.entityRows;
  }
}
