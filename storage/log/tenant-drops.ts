// The tenants whose deletion from this data folder has begun and not ended, kept in a small file so a
// deletion stopped by a crash or a kill resumes when the folder is opened again: its rows are deleted in
// parts (one transaction each, see Ledger.dropTenant), and a tenant left half-deleted must never be
// answered from as if it were whole.
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { syncDir } from './kuzu/write-journal.ts';

const FILE = 'dropping.json';

/** A read or a write of a tenant whose rows here are being deleted: refused until the deletion ends. */
export class TenantDropping extends Error {
  constructor(readonly tenant: string) {
    super(
      `tenant ${tenant}'s rows on this server are being deleted (DELETE /admin/tenants/${tenant}): ` +
        'it is served elsewhere, or again here once the deletion has finished',
    );
    this.name = 'TenantDropping';
  }
}

export class TenantDrops {
  readonly #dir: string;
  readonly #tenants: Set<string>;

  constructor(dataDir: string) {
    this.#dir = dataDir;
    const file = join(dataDir, FILE);
    this.#tenants = new Set(existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as string[]) : []);
  }

  has(tenant: string): boolean {
    return this.#tenants.has(tenant);
  }

  list(): string[] {
    return [...this.#tenants];
  }

  /** Durable when it returns: the first part of a deletion runs only after this. */
  begin(tenant: string): void {
    if (this.#tenants.has(tenant)) return;
    this.#tenants.add(tenant);
    this.#save();
  }

  /** After the last part: the tenant may be written here again (a copy moved back). */
  end(tenant: string): void {
    if (!this.#tenants.delete(tenant)) return;
    this.#save();
  }

  #save(): void {
    const file = join(this.#dir, FILE);
    if (this.#tenants.size === 0) rmSync(file, { force: true });
    else {
      const tmp = `${file}.tmp`;
      writeFileSync(tmp, JSON.stringify([...this.#tenants]), { flush: true });
      renameSync(tmp, file);
    }
    syncDir(this.#dir);
  }
}
