// An operation that answers with a file (the export bundle) becomes an embedded base64 resource; the
// staged files are removed once the bytes are read, whatever happens.
import type { CallToolResult } from '@modelcontextprotocol/server';
import { isArchive } from '../../tools/archive.ts';

export async function archiveResult(result: unknown): Promise<CallToolResult | null> {
  if (!isArchive(result)) return null;
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of result.open()) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
    const bytes = Buffer.concat(chunks);
    const uri = `ledger://export/${encodeURIComponent(result.filename)}`;
    return {
      content: [
        {
          type: 'text',
          text: `export bundle ${result.filename} (${bytes.length} bytes, ${result.mediaType}), attached as a base64 resource`,
        },
        { type: 'resource', resource: { uri, mimeType: result.mediaType, blob: bytes.toString('base64') } },
      ],
      structuredContent: { filename: result.filename, media_type: result.mediaType, bytes: bytes.length, uri },
    };
  } finally {
    await result.dispose();
  }
}
