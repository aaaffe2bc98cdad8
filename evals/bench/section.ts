// A benchmark section measures one capability and returns rows for the table `npm run bench` prints.
export interface BenchRow {
  metric: string;
  value: string;
  target: string;
  /** Whether the target is met; null where there is no target. */
  met: boolean | null;
  note?: string;
}

export interface BenchSection {
  name: string;
  run(opts: { scale: number }): Promise<BenchRow[]>;
}
