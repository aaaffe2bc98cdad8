// Search at the lens: direct hits and the expansions reached from them over links, with scores.
import { post } from './api.js';
import { $, blockLink, el, fill } from './dom.js';
import { marks } from './blocks.js';
import { certificateWords } from './words.js';

export async function runSearch(s, lens, open, stale) {
  const body = { query: s.q, as_of: lens.as_of, depth: Number(s.depth ?? 1), limit: Number(s.limit ?? 10) };
  for (const k of ['valid_at', 'space', 'kind', 'category']) if (lens[k]) body[k] = lens[k];
  // Sent only when on, so a server without these fields (strict input) is not asked about them.
  if (lens.current_only) body.current_only = true;
  if (lens.include_invalidated) body.include_invalidated = true;
  const r = await post('/v1/search', body);
  if (stale()) return;
  fill($('search-certificate'), certificateWords(r.certificate));
  fill(
    $('search-results'),
    r.results.length === 0
      ? el('li', { class: 'muted' }, 'No match.')
      : r.results.map((hit) =>
          el(
            'li',
            { class: `hit ${hit.match}`, dataset: { id: hit.node.id, match: hit.match } },
            el('span', { class: 'score', title: 'score' }, typeof hit.score === 'number' ? hit.score.toFixed(3) : String(hit.score)),
            ' ',
            el(
              'span',
              { class: `badge ${hit.match}` },
              hit.match === 'direct' ? 'direct' : `expansion · ${hit.via ?? ''} · depth ${hit.depth}`,
            ),
            ' ',
            blockLink(hit.node.id, open),
            ' ',
            el('span', { class: 'statement' }, hit.node.statement ?? ''),
            hit.match !== 'direct' && hit.path?.length ? el('div', { class: 'muted' }, `path: ${hit.path.join(' → ')}`) : null,
            marks(hit.node, open),
          ),
        ),
  );
}
