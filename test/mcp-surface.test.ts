// The tool surface as a model sees it: instants and edge types declared in the input schemas, an output
// text block (no output schema), annotations that tell reads from writes, a one-line text beside structuredContent,
// and instructions that teach the ledger's few habits.
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { annotationsOf, describeEffect } from '../server/mcp/hints.ts';
import { summarize } from '../server/mcp/render.ts';
import { formatInstant } from '../storage/time.ts';
import { operationNamed, operations } from '../tools/index.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { inMemoryClient } from './helpers/mcp-client.ts';

type Schema = {
  type?: unknown;
  format?: string;
  const?: unknown;
  enum?: string[];
  anyOf?: Schema[];
  description?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  required?: string[];
};

let t: TestApp;
let client: Client;
let confined: Client;

beforeAll(async () => {
  t = await startTestApp();
  const ctx = { ledger: t.ledger, tenant: 'local', services: t.started.services };
  client = await inMemoryClient(ctx);
  confined = await inMemoryClient({ ...ctx, confinedSpace: 'user:c' });
});
afterAll(async () => {
  await client?.close();
  await confined?.close();
  await t?.close();
});

const formats = (s: Schema | undefined): unknown[] => (s?.anyOf ?? [s ?? {}]).map((b) => b.format ?? b.const ?? b.type);
const READS = ['list_memories', 'get_memory', 'search_memory', 'why', 'export_ledger', 'list_spaces'];

describe('MCP tool listing', () => {
  it('declares instants (date-time on writes; read instants say "now" in words) and edge types', async () => {
    for (const c of [client, confined]) {
      const { tools } = await c.listTools();
      for (const tool of tools) {
        const props = (tool.inputSchema as Schema).properties ?? {};
        if (props.as_of) expect(props.as_of.description, tool.name).toMatch(/"now".*date/);
        if (props.valid_at) expect(props.valid_at.description, tool.name).toMatch(/"now"/);
      }
      const remember = tools.find((x) => x.name === 'remember')!.inputSchema as Schema;
      const node = remember.properties?.nodes?.items?.properties ?? {};
      expect(formats(node.asserted_at)).toEqual(['date-time']);
      expect(formats(node.valid_to)).toEqual(['date-time']);
      expect(formats(remember.properties?.backfill?.properties?.declared_captured_at)).toEqual(['date-time']);
      const edgeType = remember.properties?.edges?.items?.properties?.edge_type;
      expect(edgeType?.enum).toEqual(expect.arrayContaining(['CAUSES', 'SUPERSEDES', 'MENTIONS']));
      expect(edgeType?.description).toMatch(/case-insensitiv/);
    }
  });

  it('annotates reads as read-only and every writer (resolve_fact records a verdict) as not', async () => {
    const { tools } = await client.listTools();
    for (const tool of tools) {
      const a = tool.annotations ?? {};
      expect(a.openWorldHint, tool.name).toBe(false);
      if (READS.includes(tool.name)) {
        expect(a.readOnlyHint, tool.name).toBe(true);
        continue;
      }
      expect(a.readOnlyHint, tool.name).toBe(false);
      expect(a.destructiveHint, tool.name).toBe(tool.name === 'invalidate_memory');
    }
    const by = (n: string) => tools.find((x) => x.name === n);
    for (const writer of ['remember', 'declare_fact', 'resolve_fact']) expect(by(writer)?.annotations?.readOnlyHint, writer).toBe(false);
    expect(by('declare_fact')?.annotations?.idempotentHint).toBe(true);
    expect(by('resolve_fact')?.annotations?.idempotentHint).toBe(true);
    expect(by('remember')?.annotations?.idempotentHint).toBe(false);
    const invalidate = by('invalidate_memory');
    if (invalidate) {
      expect(invalidate.annotations?.idempotentHint).toBe(true);
      expect(invalidate.description).toMatch(/append-only/i);
      expect(invalidate.description).toMatch(/earlier as_of/);
    }
  });

  it('marks invalidate_memory destructive yet says it is append-only, whatever its own description says', () => {
    const base = operationNamed('invalidate_memory');
    for (const description of ['Hide a block from later reads.', 'Append-only retraction.']) {
      const op = { ...base, description };
      expect(annotationsOf(op)).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
      expect(describeEffect(op)).toMatch(/^.+ Append-only: nothing is deleted; reads with an earlier as_of still see the block/);
    }
    const own = { ...base, description: 'Append-only: an earlier as_of still sees it.' };
    expect(describeEffect(own)).toBe(own.description);
    // The annotations follow the operation's declared effect, never its name.
    const renamed = { ...operationNamed('remember'), name: 'invalidate_memory' };
    expect(annotationsOf(renamed)).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
    expect(annotationsOf({ ...base, effect: { readOnly: true } })).toEqual({ readOnlyHint: true, openWorldHint: false });
  });

  it('teaches the habits in the server instructions', () => {
    const text = client.getInstructions() ?? '';
    for (const needle of ['"now"', 'current_only', 'SUPERSEDES', 'invalidate_memory']) expect(text).toContain(needle);
    expect(text.split('\n').length).toBeLessThanOrEqual(6);
    expect(confined.getInstructions()).toContain('confined to the space "user:c"');
  });
});

describe('MCP tool results', () => {
  it('say on the first line what the answer holds, then one line per block a model can use', async () => {
    const w = await client.callTool({
      name: 'remember',
      arguments: {
        space: 'user:s',
        nodes: [{ id: 's1', kind: 'claim', statement: 'Sun rises', asserted_at: '2024-01-01T00:00:00Z' }],
        edges: [{ source_id: 's1', target_id: 'gone', edge_type: 'CAUSES' }],
      },
    });
    const asOf = formatInstant(t.ledger.now());
    const calls: [string, Record<string, unknown>, RegExp][] = [
      ['list_memories', { as_of: asOf }, /^list_memories: 1 block in space user:s as of \d{4}-/],
      [
        'list_memories',
        { as_of: '2000-01-01' },
        /^list_memories: 0 blocks as of 2000-01-01T23:59:59\.999999Z; 1 hidden \(learned later\)$/,
      ],
      ['get_memory', { id: 's1', as_of: asOf }, /^get_memory: block s1 \(claim\) "Sun rises", 1 version, 0 edges as of /],
      ['get_memory', { id: 's1', as_of: '2000-01-01' }, /^get_memory: no block \(not_yet\) as of 2000/],
      ['why', { id: 's1', as_of: asOf }, /^why: chain of 1 link in space user:s as of /],
      ['search_memory', { query: 'sun', as_of: asOf }, /^search_memory: 1 result \(1 direct, 0 by expansion\) in space user:s as of /],
    ];
    calls.push(
      ['list_spaces', { as_of: 'now' }, /^list_spaces: 1 space as of \d{4}-/],
      ['invalidate_memory', { id: 's1', reason: 'wrong' }, /^invalidate_memory: invalidated s1 from \d{4}-.*: "wrong"$/],
      ['invalidate_memory', { id: 's1', reason: 'wrong' }, /already invalidated; nothing written/],
      ['get_memory', { id: 's1', as_of: 'now' }, /^get_memory: no block \(invalidated\) as of \d{4}-/],
      ['list_memories', { as_of: 'now' }, /^list_memories: 0 blocks as of .*; 1 invalidated left out$/],
    );
    const texts = [(w.content as { text: string }[])[0]!.text];
    expect(texts[0]).toMatch(/^remember: accepted 1, refused 1 \(missing_endpoint\)\nwritten: s1\nrefused edge s1->gone: missing_endpoint/);
    for (const [name, args, line] of calls) {
      const r = await client.callTool({ name, arguments: args });
      expect(r.isError, name).toBeFalsy();
      const text = (r.content as { type: string; text: string }[])
        .filter((c) => c.type === 'text')
        .map((c) => c.text)
        .join('\n');
      expect(text, name).toMatch(line);
      texts.push(text);
    }
    for (const text of texts) expect(text).not.toMatch(/[{[]"/);
    // The block itself is in the text, not only a count: id, kind, space, statement, dates.
    expect(texts[1]).toContain('\n[s1] claim · "Sun rises" · asserted 2024-01-01');
    expect(texts.find((x) => x.startsWith('search_memory'))).toMatch(
      /\n1\. \[s1\] claim · "Sun rises" · asserted 2024-01-01 · score \d\.\d{2}$/,
    );
    expect(texts.find((x) => x.startsWith('why'))).toMatch(/\nsubject: \[s1\] claim/);
    const bad = await client.callTool({ name: 'list_memories', arguments: { as_of: 'soon' } });
    expect(bad.isError).toBe(true);
    expect((bad.content as { text: string }[])[0]?.text).toMatch(/^SVC_BAD_TIMESTAMP: as_of: /);
  });

  it('summarizes the v1.x answers (invalidation, spaces) from their shape', () => {
    const op = operationNamed('list_memories');
    const certificate = { as_of: '2024-01-01T00:00:00.000000Z', tx_as_of: '2024-01-02T00:00:00.000000Z', invalidated: 2 };
    const space = (name: string) => ({
      space: name,
      nodes: 1,
      edges: 0,
      first_known_at: '2024-01-01T00:00:00.000000Z',
      last_known_at: 'L',
    });
    expect(summarize(op, { spaces: [space('a'), space('b')], certificate })).toBe(
      'list_memories: 2 spaces as of 2024-01-01T00:00:00.000000Z; 2 invalidated left out\na: 1 node, 0 edges, known 2024-01-01 to L\nb: 1 node, 0 edges, known 2024-01-01 to L',
    );
    const invalidation = { target_id: 'n1', reason: 'wrong source', by: null, invalidated_at: 'T', known_at: 'K' };
    expect(summarize(op, { invalidation, warnings: [] })).toBe('list_memories: invalidated n1 from K: "wrong source"');
    expect(summarize(op, { invalidation, warnings: ['already_invalidated'] })).toContain('already invalidated; nothing written');
    expect(
      summarize(op, { item: null, versions: [{}], edges: { in: [], out: [] }, reason: 'invalidated', invalidation, certificate }),
    ).toMatch(/no block \(invalidated\)/);
  });
});
