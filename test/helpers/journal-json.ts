// A write-journal record as releases before 2026-11-26 wrote it: `[u32 length][u32 crc32][JSON]`,
// little-endian, the JSON `{"tables":[{"table":..,"rows":[[cells]]}]}`. Built here, not by the journal's
// own encoder, so a test of an old journal pins the bytes those releases left on disk.
import { crc32 } from 'node:zlib';

export function jsonJournalRecord(record: { tables: { table: string; rows: (string | number | null)[][] }[] }): Buffer {
  const body = Buffer.from(JSON.stringify({ tables: record.tables.map((t) => ({ table: t.table, rows: t.rows })) }), 'utf8');
  const header = Buffer.alloc(8);
  header.writeUInt32LE(body.length, 0);
  header.writeUInt32LE(crc32(body), 4);
  return Buffer.concat([header, body]);
}
