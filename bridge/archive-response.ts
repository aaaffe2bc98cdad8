// An operation's Archive as an HTTP response: the bytes streamed as they are packed (pulled, so a slow
// client slows the packing rather than filling memory), and the staged files removed once the body is
// done, failed or cancelled.
import { isArchive } from '../tools/archive.ts';
import { SvcError } from '../tools/errors.ts';

export function archiveResponse(result: unknown): Response {
  if (!isArchive(result)) throw new SvcError('internal', 'the operation did not produce an archive');
  const archive = result;
  const iterator = archive.open()[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done } = await iterator.next();
        if (done) {
          // Removed before the body ends, so a client (or a test) that stops the server once it has the
          // last byte leaves no staged files behind.
          await archive.dispose();
          controller.close();
        } else controller.enqueue(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
      } catch (error) {
        controller.error(error);
        await archive.dispose();
      }
    },
    async cancel() {
      await iterator.return?.();
      await archive.dispose();
    },
  });
  const filename = archive.filename.replace(/["\\\r\n]/g, '_');
  return new Response(body, {
    status: 200,
    headers: { 'content-type': archive.mediaType, 'content-disposition': `attachment; filename="${filename}"` },
  });
}
