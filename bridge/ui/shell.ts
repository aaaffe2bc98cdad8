// The page's HTML: a fixed shell with no data in it (the browser fills it from the REST API, as text).
// Until the first answers arrive its lists say they are loading, so a first paint is never an empty ledger.
// No inline script or style: the Content-Security-Policy forbids both. The stylesheet carries the id
// cytoscape looks for before it injects a <style> of its own (which that policy would block); its one
// rule is in style.css instead.
export const UI_SHELL = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Ledger browser</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/ui/style.css" id="__________cytoscape_stylesheet">
<script type="module" src="/ui/app.js"></script>
<!-- Every module asked for at once, not import level by import level. -->
<link rel="modulepreload" href="/ui/api.js">
<link rel="modulepreload" href="/ui/dom.js">
<link rel="modulepreload" href="/ui/state.js">
<link rel="modulepreload" href="/ui/words.js">
<link rel="modulepreload" href="/ui/time.js">
<link rel="modulepreload" href="/ui/blocks.js">
<link rel="modulepreload" href="/ui/block.js">
<link rel="modulepreload" href="/ui/graph.js">
<link rel="modulepreload" href="/ui/search.js">
<link rel="modulepreload" href="/ui/facts.js">
</head>
<body data-busy="1" aria-busy="true">
<header class="top">
  <h1>Ledger browser</h1>
  <span id="server-info" class="muted"></span>
  <span class="top-actions">
    <button id="export" type="button">Export bundle</button>
    <button id="forget-key" type="button" hidden>Forget key</button>
  </span>
</header>

<section id="key-panel" class="panel" hidden aria-labelledby="key-title">
  <h2 id="key-title">API key needed</h2>
  <p>This server is hosted: every read needs an API key. The key stays in this browser tab
  (session storage) and is sent only as a bearer token, never in an address.</p>
  <form id="key-form">
    <label for="key-input">API key</label>
    <input id="key-input" type="password" autocomplete="off" required>
    <button type="submit">Use key</button>
  </form>
  <p id="key-error" class="error" role="alert"></p>
</section>

<p id="status" class="error" role="alert"></p>

<section id="time" class="panel" aria-labelledby="time-title">
  <h2 id="time-title">Time</h2>
  <div class="time-row">
    <label for="as-of-slider">Known as of</label>
    <input id="as-of-slider" type="range" min="0" max="1000" step="1" value="1000" aria-describedby="time-range" list="as-of-ticks">
    <datalist id="as-of-ticks"></datalist>
    <button id="as-of-now" type="button">Now</button>
  </div>
  <div class="time-row">
    <label for="as-of">as_of</label>
    <input id="as-of" type="text" spellcheck="false" autocomplete="off">
    <label for="valid-at">valid_at (optional)</label>
    <input id="valid-at" type="text" spellcheck="false" autocomplete="off" placeholder="e.g. 2024-03-01T00:00:00Z">
  </div>
  <p id="time-range" class="muted loading">Loading the time range…</p>
</section>

<main class="grid">
  <nav id="spaces-panel" class="panel" aria-labelledby="spaces-title">
    <h2 id="spaces-title">Spaces</h2>
    <ul id="spaces" class="plain"><li class="muted loading">Loading spaces…</li></ul>
  </nav>

  <section id="blocks-panel" class="panel" aria-labelledby="blocks-title">
    <h2 id="blocks-title">Blocks</h2>
    <form id="filters" class="filters">
      <label for="f-kind">Kind</label>
      <input id="f-kind" list="kinds" autocomplete="off">
      <datalist id="kinds">
        <option value="entity"></option><option value="claim"></option><option value="prediction"></option>
        <option value="factor"></option><option value="timeseries"></option><option value="episode"></option>
      </datalist>
      <label for="f-category">Category</label>
      <input id="f-category" autocomplete="off">
      <span class="check"><input id="f-current" type="checkbox"><label for="f-current">Current only</label></span>
      <span class="check"><input id="f-invalidated" type="checkbox"><label for="f-invalidated">Include invalidated</label></span>
    </form>
    <p id="certificate" class="certificate" aria-live="polite"></p>
    <ul id="blocks" class="plain blocks"><li class="muted loading">Loading blocks…</li></ul>
    <button id="more" type="button" hidden>Show more</button>
  </section>

  <section id="block-panel" class="panel" aria-labelledby="block-title">
    <h2 id="block-title">Block</h2>
    <div id="block"><p class="muted">Select a block to see its versions, links and evidence.</p></div>
    <h3>Evidence chain</h3>
    <div id="why-graph" class="graph" role="img" aria-label="Evidence chain graph; the list below has the same links"></div>
    <ol id="why-list" class="plain"></ol>
  </section>

  <section id="search-panel" class="panel" aria-labelledby="search-title">
    <h2 id="search-title">Search</h2>
    <form id="search-form" class="filters">
      <label for="q">Query</label>
      <input id="q" type="search" autocomplete="off">
      <label for="depth">Expansion depth</label>
      <select id="depth"><option>0</option><option selected>1</option><option>2</option><option>3</option></select>
      <label for="limit">Direct hits</label>
      <select id="limit"><option>2</option><option>5</option><option selected>10</option><option>20</option><option>50</option></select>
      <button type="submit">Search</button>
    </form>
    <p id="search-certificate" class="certificate"></p>
    <ol id="search-results" class="plain"></ol>
  </section>

  <section id="facts-panel" class="panel" aria-labelledby="facts-title">
    <h2 id="facts-title">Facts</h2>
    <form id="fact-form" class="filters">
      <label for="fact">Fact key</label>
      <input id="fact" autocomplete="off">
      <button type="submit">Resolve</button>
    </form>
    <div id="fact-result"></div>
  </section>
</main>
</body>
</html>
`;
