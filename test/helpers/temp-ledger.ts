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

/** A temporary folder whose ledger a test closes and opens again (a restart); `remove` closes it and deletes the folder. */
export interface RestartableLedger {
  dir: string;
  /** Closes the ledger open now, if any, and opens the folder's again. */
  open(): Promise<Ledger>;
  remove(): Promise<void>;
}

export function restartableLedger(prefix: string, opts?: Parameters<typeof Ledger.open>[1]): RestartableLedger {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  let current: Ledger | null = null;
  return {
    dir,
    async open() {
      await current?.close();
      current = null;
      current = await Ledger.open(join(dir, 'data'), opts);
      return current;
    },
    async remove() {
      await current?.close();
      current = null;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A node the tests of spaces write: its id is its statement's subject. */
export const claim = (id: string): { id: string; kind: string; statement: string } => ({ id, kind: 'claim', statement: `about ${id}` });

/** The names of the spaces whose views are resident, sorted (tests asserting what a request loaded). */
export const spacesLoaded = (l: Pick<Ledger, 'residentSpaces'>): string[] =>
  l
    .residentSpaces()
    .map(([, space]) => space)
    .sort();

/**
 * Holds a write after its lookup by id (KuzuGraphOptions.afterLookup) while a test lands a commit: `shut()`
 * before the write, `reached` once it waits there, `open()` to let it plan.
 */
export function lookupGate(): { afterLookup: () => Promise<void>; reached: Promise<void>; shut(): void; open(): void } {
  let hold: Promise<void> | null = null;
  let release = (): void => undefined;
  let arrived!: () => void;
  const reached = new Promise<void>((r) => {
    arrived = r;
  });
  return {
    afterLookup: async () => {
      if (!hold) return;
      arrived();
      await hold;
    },
    reached,
    shut() {
      hold = new Promise<void>((r) => {
        release = r;
      });
    },
    open() {
      hold = null;
      release();
    },
  };
}

/** A read models' budget of ~280 rows (ROW_BYTES each): more than one read by spaces in these tests loads. */
export const SMALL_BUDGET_MB = 0.2;
/** Rows of a space past SMALL_BUDGET_MB: loading it evicts every other view not in use. */
export const FILLER_ROWS = 300;
