// The block list: one line per row version, with what a reader must not miss marked beside it
// (superseded, invalidated, backfilled).
import { blockLink, el } from './dom.js';
import { shortInstant } from './words.js';

export function marks(row, open) {
  const out = [];
  if (row.superseded_by?.length) {
    out.push(
      el(
        'span',
        { class: 'mark superseded' },
        'superseded by ',
        row.superseded_by.map((id, i) => [i ? ', ' : '', blockLink(id, open)]),
      ),
    );
  }
  if (row.invalidated) {
    const inv = row.invalidated;
    out.push(
      el(
        'span',
        { class: 'mark invalidated' },
        `invalidated${inv.by ? ` by ${inv.by}` : ''}: ${inv.reason} (known ${shortInstant(inv.known_at)})`,
      ),
    );
  }
  if (row.known_at && row.captured_at && row.known_at !== row.captured_at) {
    out.push(
      el('span', { class: 'mark backfill', title: `captured ${row.captured_at}` }, `backfilled: known ${shortInstant(row.known_at)}`),
    );
  }
  return out;
}

export function blockItem(row, open, selectedId) {
  const superseded = Boolean(row.superseded_by?.length);
  return el(
    'li',
    {
      class: 'block',
      dataset: { id: row.id, superseded: superseded ? '1' : '0', invalidated: row.invalidated ? '1' : '0' },
    },
    el(
      'button',
      {
        type: 'button',
        class: 'open',
        'aria-current': row.id === selectedId ? 'true' : undefined,
        onclick: () => open(row.id),
      },
      el('span', { class: 'kind' }, row.kind),
      ' ',
      el('span', { class: 'id' }, row.id),
      ' ',
      el('span', { class: 'statement' }, row.statement ?? '(no statement)'),
    ),
    el(
      'div',
      { class: 'meta' },
      row.space,
      ' · ',
      row.category ?? 'no category',
      ' · asserted ',
      shortInstant(row.asserted_at),
      ' · valid ',
      shortInstant(row.valid?.from),
      ' – ',
      row.valid?.to ? shortInstant(row.valid.to) : 'open',
    ),
    marks(row, open),
  );
}
