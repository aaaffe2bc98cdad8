// The list cursor: an opaque token for "rows after this sequence number". The server and the offline
// bundle reader page the same way, so a cursor means the same to both.

export const encodeCursor = (seq: number): string => Buffer.from(`s:${seq}`).toString('base64url');

/** The sequence number a cursor carries, or null when it is not a cursor this ledger issued. */
export function decodeCursor(cursor: string): number | null {
  const m = /^s:(\d{1,16})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return m ? Number(m[1]) : null;
}
