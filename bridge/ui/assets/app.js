// The ledger browser: state in the address, one refresh per change that redraws every panel at the
// chosen (as_of, valid_at), answers of an older refresh dropped. Reads only the public REST API.
import { ApiError, AuthError, download, get, key } from './api.js';
import { $, el, fill } from './dom.js';
import { blockItem } from './blocks.js';
import { clearBlock, showBlock } from './block.js';
import { runFact } from './facts.js';
import { runSearch } from './search.js';
import { readState, writeState } from './state.js';
import { STEPS, instantAt, positionOf } from './time.js';
import { certificateWords, plural, shortInstant } from './words.js';

const PAGE = 200;
const S = readState();
const range = { first: null, now: null };
let gen = 0;
let cursor = null;
let firstRender = true;
// Browser-side timings (ms) the tests and the bench read: first list render, and list refreshes.
window.ledgerUi = { timings: [], graph: null };

const lens = () => ({
  as_of: S.as_of ?? range.now,
  valid_at: S.valid_at,
  space: S.space,
  kind: S.kind,
  category: S.category,
  current_only: S.current_only === '1',
  include_invalidated: S.include_invalidated === '1',
});

function busy(on) {
  document.body.dataset.busy = on ? '1' : '0';
  document.body.setAttribute('aria-busy', on ? 'true' : 'false');
}
/** The shell's "Loading…" placeholders, once an answer or a failure has taken their place. */
function dropLoading() {
  for (const n of document.querySelectorAll('.loading')) {
    if (n.tagName === 'LI') n.remove();
    else {
      n.textContent = '';
      n.classList.remove('loading');
    }
  }
}
function status(text) {
  fill($('status'), text ?? '');
}

let focusBlock = false;

function open(id) {
  S.block = id;
  focusBlock = true; // a reader who chose a block is taken to it (below the list on a phone)
  writeState(S, true);
  refresh('block');
}

/** Spaces at an instant; a server without GET /v1/spaces gets them counted from a list page. */
async function spacesAt(asOf) {
  try {
    return await get('/v1/spaces', { as_of: asOf });
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 404) throw e;
    const page = await get('/v1/memories', { as_of: asOf, limit: 1000 });
    const by = new Map();
    for (const n of page.items) {
      const s = by.get(n.space) ?? { space: n.space, nodes: 0, edges: null, first_known_at: n.known_at, last_known_at: n.known_at };
      s.nodes++;
      if (n.known_at < s.first_known_at) s.first_known_at = n.known_at;
      if (n.known_at > s.last_known_at) s.last_known_at = n.known_at;
      by.set(n.space, s);
    }
    return { spaces: [...by.values()].sort((a, b) => (a.space < b.space ? -1 : 1)), certificate: page.certificate, estimated: true };
  }
}

/** The slider's ends: the server's present (GET /v1/version `now`, else this browser's clock) and the
 * tenant's first knowledge instant. */
async function loadRange() {
  const v = await get('/v1/version');
  fill($('server-info'), `${v.name ?? 'memory-ledger'} ${v.version ?? ''}`);
  const now = v.now ?? new Date().toISOString();
  const sp = await spacesAt(now); // a hosted server without a key stops here (401), range left unset
  spacesCache = { as_of: now, answer: sp };
  const firsts = sp.spaces
    .map((s) => s.first_known_at)
    .filter(Boolean)
    .sort();
  range.now = now;
  range.first = firsts[0] ?? now;
  // Tick marks where a space's knowledge starts and ends: where the slider is worth stopping.
  const ticks = new Set(
    sp.spaces
      .flatMap((s) => [s.first_known_at, s.last_known_at])
      .filter(Boolean)
      .map((t) => positionOf(t, range)),
  );
  fill(
    $('as-of-ticks'),
    [...ticks].sort((a, b) => a - b).map((p) => el('option', { value: String(p) })),
  );
  fill($('time-range'), `From ${shortInstant(range.first)} (first knowledge) to ${shortInstant(range.now)} (now)`);
  $('time-range').classList.remove('loading');
}

function showTime() {
  const asOf = S.as_of ?? range.now;
  $('as-of-slider').value = String(positionOf(asOf, range));
  $('as-of-slider').setAttribute('aria-valuetext', shortInstant(asOf));
  if (document.activeElement !== $('as-of')) $('as-of').value = asOf;
  if (document.activeElement !== $('valid-at')) $('valid-at').value = S.valid_at ?? '';
  $('f-kind').value = S.kind ?? '';
  $('f-category').value = S.category ?? '';
  $('f-current').checked = S.current_only === '1';
  $('f-invalidated').checked = S.include_invalidated === '1';
  $('q').value = S.q ?? '';
  $('depth').value = S.depth ?? '1';
  $('limit').value = S.limit ?? '10';
  $('fact').value = S.fact ?? '';
}

// The answer loadRange just fetched at `now` is the one the panel needs when the view is at now.
let spacesCache = null;

async function drawSpaces(l, stale) {
  const sp = spacesCache?.as_of === l.as_of ? spacesCache.answer : await spacesAt(l.as_of);
  spacesCache = null;
  if (stale()) return;
  const item = (name, label, count) =>
    el(
      'li',
      {},
      el(
        'button',
        {
          type: 'button',
          class: 'space',
          'aria-pressed': String((S.space ?? null) === name),
          dataset: { space: name ?? '' },
          onclick: () => {
            S.space = name ?? undefined;
            S.block = undefined;
            writeState(S);
            refresh('space');
          },
        },
        label,
        el('span', { class: 'count' }, count),
      ),
    );
  fill(
    $('spaces'),
    item(null, 'All spaces', ''),
    sp.spaces.map((s) =>
      item(
        s.space,
        s.space,
        ` ${plural(s.nodes, 'block')}${s.edges === null || s.edges === undefined ? '' : `, ${plural(s.edges, 'link')}`}`,
      ),
    ),
    sp.estimated ? el('li', { class: 'muted' }, 'Counted from the first 1,000 rows (this server has no GET /v1/spaces).') : null,
  );
}

function listQuery(l) {
  return {
    as_of: l.as_of,
    valid_at: l.valid_at,
    space: l.space,
    kind: l.kind,
    category: l.category,
    limit: PAGE,
    current_only: l.current_only ? 'true' : undefined,
    include_invalidated: l.include_invalidated ? 'true' : undefined,
  };
}

async function drawBlocks(l, stale, t0) {
  const page = await get('/v1/memories', listQuery(l));
  if (stale()) return;
  cursor = page.next_cursor ?? null;
  fill($('certificate'), certificateWords(page.certificate));
  fill(
    $('blocks'),
    page.items.length ? page.items.map((r) => blockItem(r, open, S.block)) : el('li', { class: 'muted' }, 'No blocks visible here.'),
  );
  $('more').hidden = cursor === null;
  const ms = performance.now() - t0;
  window.ledgerUi.timings.push({
    what: firstRender ? 'first-render' : 'list-refresh',
    ms,
    sinceLoad: performance.now(),
    rows: page.items.length,
  });
  firstRender = false;
}

async function refresh(why) {
  const my = ++gen;
  const stale = () => my !== gen;
  const t0 = performance.now();
  busy(true);
  status('');
  try {
    if (!range.now || why === 'now') await loadRange();
    if (stale()) return;
    showTime();
    const l = lens();
    const tasks = [drawSpaces(l, stale), drawBlocks(l, stale, t0)];
    if (S.block) tasks.push(showBlock(S.block, l, open, stale));
    else clearBlock();
    if (S.q) tasks.push(runSearch(S, l, open, stale));
    if (S.fact) tasks.push(runFact(S, l, open, stale));
    await Promise.all(tasks);
    if (focusBlock && S.block) $('block').querySelector('h3')?.focus();
    focusBlock = false;
    $('key-panel').hidden = true;
    $('forget-key').hidden = !key.get();
  } catch (e) {
    if (stale()) return;
    dropLoading();
    if (e instanceof AuthError) return askKey(Boolean(key.get()));
    status(e instanceof ApiError ? `The server refused the read: ${e.message}` : `Could not reach the server: ${e.message}`);
  } finally {
    if (!stale()) busy(false);
  }
}

function askKey(refused) {
  if (refused) key.clear();
  $('key-panel').hidden = false;
  $('forget-key').hidden = true;
  fill($('key-error'), refused ? 'That key was refused (401). Check it and try again.' : '');
  fill($('blocks'));
  fill($('spaces'));
  fill($('certificate'));
  $('key-input').focus();
}

let debounce = null;
function wire() {
  const slider = $('as-of-slider');
  slider.max = String(STEPS);
  slider.addEventListener('input', () => {
    const pos = Number(slider.value);
    const at = instantAt(pos, range);
    S.as_of = pos >= STEPS ? undefined : at;
    $('as-of').value = at;
    writeState(S);
    busy(true);
    clearTimeout(debounce);
    debounce = setTimeout(() => refresh('slider'), 120);
  });
  slider.addEventListener('change', () => {
    clearTimeout(debounce);
    refresh('slider');
  });
  $('as-of').addEventListener('change', (e) => {
    const v = e.target.value.trim();
    S.as_of = v === '' || v === range.now ? undefined : v;
    writeState(S);
    refresh('as_of');
  });
  $('valid-at').addEventListener('change', (e) => {
    S.valid_at = e.target.value.trim() || undefined;
    writeState(S);
    refresh('valid_at');
  });
  $('as-of-now').addEventListener('click', () => {
    S.as_of = undefined;
    writeState(S);
    refresh('now');
  });
  const filter = (id, k, read) =>
    $(id).addEventListener('change', (e) => {
      S[k] = read(e.target);
      writeState(S);
      refresh('filter');
    });
  filter('f-kind', 'kind', (t) => t.value.trim() || undefined);
  filter('f-category', 'category', (t) => t.value.trim() || undefined);
  filter('f-current', 'current_only', (t) => (t.checked ? '1' : undefined));
  filter('f-invalidated', 'include_invalidated', (t) => (t.checked ? '1' : undefined));
  $('filters').addEventListener('submit', (e) => e.preventDefault());
  $('search-form').addEventListener('submit', (e) => {
    e.preventDefault();
    S.q = $('q').value.trim() || undefined;
    S.depth = $('depth').value;
    S.limit = $('limit').value;
    writeState(S);
    if (!S.q) fill($('search-results'));
    refresh('search');
  });
  $('fact-form').addEventListener('submit', (e) => {
    e.preventDefault();
    S.fact = $('fact').value.trim() || undefined;
    writeState(S);
    if (!S.fact) fill($('fact-result'));
    refresh('fact');
  });
  $('more').addEventListener('click', async () => {
    try {
      const page = await get('/v1/memories', { ...listQuery(lens()), cursor });
      cursor = page.next_cursor ?? null;
      $('blocks').append(...page.items.map((r) => blockItem(r, open, S.block)));
      $('more').hidden = cursor === null;
    } catch (e) {
      status(e.message);
    }
  });
  $('key-form').addEventListener('submit', (e) => {
    e.preventDefault();
    key.set($('key-input').value.trim());
    $('key-input').value = '';
    refresh('key');
  });
  $('forget-key').addEventListener('click', () => {
    key.clear();
    askKey(false);
  });
  $('export').addEventListener('click', async () => {
    try {
      const name = await download('/v1/export', { as_of: lens().as_of, space: S.space });
      status('');
      fill($('server-info'), `Saved ${name}`);
    } catch (e) {
      if (e instanceof AuthError) return askKey(Boolean(key.get()));
      status(`Export failed: ${e.message}`);
    }
  });
  // Back/forward and edited addresses: take the state from the address again.
  const reread = () => {
    for (const k of Object.keys(S)) delete S[k];
    Object.assign(S, readState());
    refresh('address');
  };
  window.addEventListener('popstate', reread);
  window.addEventListener('hashchange', reread);
}

wire();
refresh('load');
