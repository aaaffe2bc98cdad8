// Resolve a declared fact at the lens: the outcome, the value chosen by the ledger's policy, and every
// candidate it weighed. Each answer is recorded by the server as a verdict.
import { post } from './api.js';
import { $, blockLink, el, fill } from './dom.js';
import { certificateWords, shortInstant } from './words.js';

export async function runFact(s, lens, open, stale) {
  const body = { fact: s.fact, as_of: lens.as_of };
  if (lens.valid_at) body.valid_at = lens.valid_at;
  if (lens.space) body.space = lens.space;
  const r = await post('/v1/resolve', body);
  if (stale()) return;
  const answered = r.status === 'answered';
  const chosen = answered ? JSON.stringify(r.value) : null;
  fill(
    $('fact-result'),
    el(
      'p',
      { class: `outcome ${r.status}`, dataset: { status: r.status } },
      answered ? ['Answered: ', el('strong', {}, JSON.stringify(r.value))] : `No answer: ${r.reason ?? 'unknown reason'}`,
      ` (policy ${r.policy ?? 'none declared'})`,
    ),
    el(
      'p',
      { class: 'muted' },
      r.verdict
        ? `Recorded verdict: ${JSON.stringify(r.verdict)}`
        : 'The ledger records this outcome as a verdict (the same fact, candidates and rules give the same verdict).',
    ),
    el(
      'table',
      { class: 'candidates' },
      el('caption', {}, `${r.candidates.length} candidate${r.candidates.length === 1 ? '' : 's'}`),
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          ['', 'id', 'value', 'source', 'valid', 'known'].map((h) => el('th', { scope: 'col' }, h)),
        ),
      ),
      el(
        'tbody',
        {},
        r.candidates.map((c) =>
          el(
            'tr',
            { dataset: { id: c.id } },
            el('td', {}, chosen !== null && JSON.stringify(c.value) === chosen ? '✔' : ''),
            el('td', {}, blockLink(c.id, open)),
            el('td', {}, JSON.stringify(c.value)),
            el('td', {}, c.source ?? c.space),
            el('td', {}, shortInstant(c.valid?.from), ' – ', c.valid?.to ? shortInstant(c.valid.to) : 'open'),
            el('td', {}, shortInstant(c.known_at)),
          ),
        ),
      ),
    ),
    el('p', { class: 'certificate' }, certificateWords(r.certificate)),
  );
}
