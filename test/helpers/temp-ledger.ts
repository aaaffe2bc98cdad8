// A ledger in a fresh temporary folder for tests that write through it by hand; `remove` closes it and
// deletes the folder.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ledger } from '../../storage/log/ledger.ts';

export interface TempLedger {
  dir: string;
  ledger: Ledger;
  remove(): Promise<void>;
}

export async function tempLedger(prefix: string): Promise<TempLedger> {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const ledger = await Ledger.open(join(dir, 'data'));
  return {
    dir,
    ledger,
    async remove() {
      await ledger.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
