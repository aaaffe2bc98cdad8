// An operation result that is a file rather than JSON (the export bundle). The REST door streams it as
// the response body; the MCP door returns it as an embedded base64 resource. Whoever consumes it calls
// `dispose()` afterwards, which removes the staged files.
import type { Readable } from 'node:stream';

export interface Archive {
  readonly kind: 'archive';
  /** File name offered to the client, e.g. `ledger-alpha-20240301T000000000000Z.tar.gz`. */
  readonly filename: string;
  readonly mediaType: 'application/gzip';
  /** The archive's bytes; call once. */
  open(): Readable;
  dispose(): Promise<void>;
}

export function isArchive(value: unknown): value is Archive {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'archive';
}
