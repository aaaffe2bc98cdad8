// Every read builds its certificate here: the as_of applied, when the server answered, what was hidden
// because it was learned later (by kind), and which shown rows rest on a declared backfill instant.
import { formatInstant, type Micros } from '../time.ts';

export interface MaskedCounts {
  node?: number;
  edge?: number;
  verdict?: number;
}

export interface Certificate {
  as_of: string;
  tx_as_of: string;
  masked?: MaskedCounts;
  backfill?: { batches: number; rows: number };
  /** Versions left out because their node was invalidated as of the read; omitted when 0. */
  invalidated?: number;
  rules_as_of?: string;
  fact?: string;
}

export interface CertificateInput {
  asOf: Micros;
  txAsOf: Micros;
  masked?: MaskedCounts;
  /** Batch ids of the rows shown (null for rows without a declared instant). */
  shownBatches?: Iterable<string | null>;
  invalidated?: number | undefined;
  rulesAsOf?: Micros | undefined;
  fact?: string;
}

/** Masked counts with the zero kinds left out; undefined when nothing was hidden. */
export function nonZeroMasked(masked: MaskedCounts | undefined): MaskedCounts | undefined {
  if (!masked) return undefined;
  const out: MaskedCounts = {};
  for (const k of ['node', 'edge', 'verdict'] as const) {
    const n = masked[k];
    if (n) out[k] = n;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

export function buildCertificate(input: CertificateInput): Certificate {
  const cert: Certificate = { as_of: formatInstant(input.asOf), tx_as_of: formatInstant(input.txAsOf) };
  const masked = nonZeroMasked(input.masked);
  if (masked) cert.masked = masked;
  const batches = new Set<string>();
  let rows = 0;
  for (const b of input.shownBatches ?? []) {
    if (b === null) continue;
    batches.add(b);
    rows++;
  }
  if (rows > 0) cert.backfill = { batches: batches.size, rows };
  if (input.invalidated) cert.invalidated = input.invalidated;
  if (input.rulesAsOf !== undefined) cert.rules_as_of = formatInstant(input.rulesAsOf);
  if (input.fact !== undefined) cert.fact = input.fact;
  return cert;
}
