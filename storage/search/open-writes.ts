// A block's full-text document holds the words of the blocks linked to it by rows of its own write
// (context.ts: rows with its captured_at count whatever their seq), so it can be indexed only once its
// write is whole. A write made here is one commit, whole. A tenant copied from another server arrives in
// pages cut anywhere, and a page may end inside one of the source's writes: the rest of it (its edges, its
// other nodes) comes with the next page. A node indexed before the rest of its write landed was found by
// fewer words on the copy than on the source, and by which words depended on whether the indexer ran
// before or after the next page was stored (a tenant copy's search ranked differently from its source's).
// So the nodes of each tenant's last imported write are held back until the tenant's next commit shows
// that write complete (a row of a later write, or a write made here), or until a read needs them.
import type { CommitGroup } from '../commit-group.ts';
import type { EdgeRecord, NodeVersion } from '../types.ts';

type Rows = Readonly<Pick<CommitGroup, 'nodes' | 'edges'>>;

export class OpenWrites {
  /** Per tenant, the nodes of its last imported write, in seq order. */
  readonly #held = new Map<string, NodeVersion[]>();
  readonly #imported: (row: NodeVersion | EdgeRecord) => boolean;

  constructor(imported: (row: NodeVersion | EdgeRecord) => boolean) {
    this.#imported = imported;
  }

  /**
   * The nodes to index now: those of `rows` and those held before, but for the nodes of each tenant's
   * last write when that write was imported (it may go on in the next page), which are held. Each
   * tenant's nodes come in seq order, held ones first: the index appends a tenant's rows in seq order.
   */
  admit(rows: Rows): NodeVersion[] {
    const byTenant = new Map<string, { nodes: NodeVersion[]; last: NodeVersion | EdgeRecord | null }>();
    const entry = (tenant: string): { nodes: NodeVersion[]; last: NodeVersion | EdgeRecord | null } => {
      let e = byTenant.get(tenant);
      if (!e) byTenant.set(tenant, (e = { nodes: [], last: null }));
      return e;
    };
    for (const n of rows.nodes) {
      const e = entry(n.tenant);
      e.nodes.push(n);
      if (e.last === null || n.seq > e.last.seq) e.last = n;
    }
    for (const r of rows.edges) {
      const e = entry(r.tenant);
      if (e.last === null || r.seq > e.last.seq) e.last = r;
    }
    const out: NodeVersion[] = [];
    for (const [tenant, { nodes, last }] of byTenant) {
      const all = [...(this.#held.get(tenant) ?? []), ...nodes.sort((a, b) => a.seq - b.seq)];
      this.#held.delete(tenant);
      if (last === null || !this.#imported(last)) {
        out.push(...all);
        continue;
      }
      const open = last.captured_at;
      const held = all.filter((n) => n.captured_at === open);
      for (const n of all) if (n.captured_at !== open) out.push(n);
      if (held.length > 0) this.#held.set(tenant, held);
    }
    return out;
  }

  /** Gives up the held nodes of `tenant` (of every tenant when undefined), in seq order per tenant. */
  release(tenant?: string): NodeVersion[] {
    const out: NodeVersion[] = [];
    for (const [t, nodes] of this.#held)
      if (tenant === undefined || t === tenant) {
        out.push(...nodes);
        this.#held.delete(t);
      }
    return out;
  }

  holds(tenant: string): boolean {
    return this.#held.has(tenant);
  }

  /** The lowest seq held (Infinity when none): the index records its progress below it. */
  lowestSeq(): number {
    let low = Number.POSITIVE_INFINITY;
    for (const nodes of this.#held.values()) low = Math.min(low, nodes[0]?.seq ?? low);
    return low;
  }

  /** Nodes held. */
  get size(): number {
    let n = 0;
    for (const nodes of this.#held.values()) n += nodes.length;
    return n;
  }
}
