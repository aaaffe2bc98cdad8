// One block: the row in force, its versions, its links in and out, what supersedes it, its
// invalidation, and its evidence chain (drawn by graph.js).
import { get } from './api.js';
import { $, blockLink, el, fill, jsonText } from './dom.js';
import { drawChain } from './graph.js';
import { marks } from './blocks.js';
import { certificateWords, shortInstant } from './words.js';

const REASONS = {
  not_yet: 'Not yet known at this as_of: the ledger learned it later.',
  absent: 'No block with this id in this tenant.',
  invalidated: 'Invalidated: hidden from reads from the instant below on.',
};

function fields(row) {
  const dl = el('dl', { class: 'fields' });
  const add = (k, ...v) => dl.append(el('dt', {}, k), el('dd', {}, ...v));
  add('kind', row.kind);
  add('space', row.space);
  add('category', row.category ?? '—');
  add('statement', row.statement ?? '—');
  add('asserted', shortInstant(row.asserted_at));
  add('valid', shortInstant(row.valid?.from), ' – ', row.valid?.to ? shortInstant(row.valid.to) : 'open');
  add('captured', shortInstant(row.captured_at));
  add('known', shortInstant(row.known_at));
  if (row.fact_key) add('fact', row.fact_key, ' = ', JSON.stringify(row.fact_value));
  if (Array.isArray(row.superseded_by))
    add(
      'superseded by',
      row.superseded_by.length ? row.superseded_by.map((id, i) => [i ? ', ' : '', blockLink(id, openRef)]) : 'nothing (current)',
    );
  return dl;
}

function edgeLine(e, dir) {
  const other = dir === 'out' ? e.target_id : e.source_id;
  return el(
    'li',
    { dataset: { edge: `${e.source_id}->${e.target_id}` } },
    dir === 'out' ? `→ ${e.edge_type} ` : '',
    blockLink(other, openRef),
    dir === 'in' ? ` ${e.edge_type} →` : '',
    e.mechanism ? el('span', { class: 'muted' }, ` ${e.mechanism}`) : null,
    el('span', { class: 'muted' }, ` asserted ${shortInstant(e.asserted_at)}`),
  );
}

let openRef = () => {};

/** Loads and draws block `id` at the lens; `stale()` says a newer refresh has started. */
export async function showBlock(id, lens, open, stale) {
  openRef = open;
  // Without include_invalidated the server answers an invalidated block with reason "invalidated" and
  // the invalidation itself, which is what a reader opening it needs to see first.
  const q = { as_of: lens.as_of, valid_at: lens.valid_at };
  const path = `/v1/memories/${encodeURIComponent(id)}`;
  const [one, why] = await Promise.all([get(path, q), get(`${path}/why`, { as_of: lens.as_of, valid_at: lens.valid_at, depth: 3 })]);
  if (stale()) return;
  const box = $('block');
  const parts = [el('h3', { class: 'id', tabindex: '-1' }, id)];
  if (one.reason)
    parts.push(el('p', { class: `reason ${one.reason}`, dataset: { reason: one.reason } }, REASONS[one.reason] ?? one.reason));
  if (one.invalidation) {
    const inv = one.invalidation;
    parts.push(
      el(
        'p',
        { class: 'mark invalidated' },
        `Reason: ${inv.reason}`,
        inv.by ? `; by ${inv.by}` : '',
        `; invalidated ${shortInstant(inv.invalidated_at)}`,
        inv.known_at !== inv.invalidated_at ? `, known from ${shortInstant(inv.known_at)}` : '',
      ),
    );
  }
  const row = one.item ?? one.versions?.[one.versions.length - 1];
  if (row) parts.push(fields(row), el('div', { class: 'marks' }, marks(row, open)), el('h4', {}, 'Payload'), jsonText(row.payload ?? {}));
  if (one.versions?.length) {
    parts.push(
      el('h4', {}, `Versions (${one.versions.length})`),
      el(
        'ol',
        { class: 'versions' },
        one.versions.map((v) =>
          el(
            'li',
            {},
            `valid ${shortInstant(v.valid?.from)} – ${v.valid?.to ? shortInstant(v.valid.to) : 'open'}, known ${shortInstant(v.known_at)}: `,
            v.statement ?? '(no statement)',
          ),
        ),
      ),
    );
  }
  const edges = one.edges ?? { in: [], out: [] };
  parts.push(
    el('h4', {}, `Links out (${edges.out.length})`),
    el(
      'ul',
      { class: 'plain edges', id: 'edges-out' },
      edges.out.map((e) => edgeLine(e, 'out')),
    ),
  );
  parts.push(
    el('h4', {}, `Links in (${edges.in.length})`),
    el(
      'ul',
      { class: 'plain edges', id: 'edges-in' },
      edges.in.map((e) => edgeLine(e, 'in')),
    ),
  );
  parts.push(el('p', { class: 'certificate' }, certificateWords(one.certificate)));
  fill(box, parts);
  await drawChain($('why-graph'), $('why-list'), why.chain ?? [], open);
  if (!why.chain?.length && why.reason) $('why-list').append(el('li', { class: 'muted' }, `No chain: ${why.reason}`));
}

export function clearBlock() {
  fill($('block'), el('p', { class: 'muted' }, 'Select a block to see its versions, links and evidence.'));
  drawChain($('why-graph'), $('why-list'), [], () => {});
}
