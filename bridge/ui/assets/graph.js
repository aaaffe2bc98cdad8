// The evidence chain as a graph (cytoscape, served from our own node_modules) and the same links as a
// list, which is what the keyboard and screen readers use. Labels are drawn on a canvas: text only.
import { blockLink, el, fill } from './dom.js';

let cy = null;

// A role names the node relative to the one before it on the path; these roles mean the node is the
// edge's source (c1 is the `cause` of c2: c1 CAUSES c2), so arrows follow the ledger's edges.
const SOURCE_ROLES = new Set([
  'cause',
  'contributing_cause',
  'trigger',
  'preventer',
  'support',
  'contradiction',
  'qualification',
  'successor',
  'restatement',
]);

const label = (node) => {
  const s = node.statement ?? node.id;
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
};

// Loaded on first use (a script from our own origin, which the CSP allows), so the first render of
// the block list does not wait for ~400 kB of graph library.
let loading = null;
function cytoscapeReady() {
  if (typeof window.cytoscape === 'function') return Promise.resolve(true);
  loading ??= new Promise((resolve) => {
    const script = document.createElement('script');
    script.src = '/ui/vendor/cytoscape.min.js';
    script.onload = () => resolve(true);
    script.onerror = () => resolve(false);
    document.head.append(script);
  });
  return loading;
}

let draws = 0;

export async function drawChain(container, list, chain, open) {
  const mine = ++draws;
  fill(
    list,
    chain.map((link) =>
      el(
        'li',
        { dataset: { id: link.node.id, role: link.role } },
        el('span', { class: 'role' }, link.role),
        ' ',
        blockLink(link.node.id, open),
        ` ${link.node.statement ?? ''}`,
        link.via ? el('span', { class: 'muted' }, ` (via ${link.via}, depth ${link.depth})`) : null,
      ),
    ),
  );
  if (cy) {
    cy.destroy();
    cy = null;
  }
  container.hidden = chain.length === 0;
  if (chain.length === 0 || !(await cytoscapeReady()) || mine !== draws) return;
  const nodes = chain.map((l) => ({ data: { id: l.node.id, label: label(l.node), subject: l.depth === 0 ? 1 : 0 } }));
  const ids = new Set(nodes.map((n) => n.data.id));
  const edges = [];
  for (const l of chain) {
    const from = l.path.length >= 2 ? l.path[l.path.length - 2] : null;
    if (from === null || !ids.has(from)) continue;
    const [source, target] = SOURCE_ROLES.has(l.role) ? [l.node.id, from] : [from, l.node.id];
    edges.push({
      data: { id: `${source}->${target}`, source, target, label: l.role, arrow: l.role === 'concurrent' ? 'none' : 'triangle' },
    });
  }
  cy = window.cytoscape({
    container,
    elements: { nodes, edges },
    layout: {
      name: 'breadthfirst',
      directed: false,
      roots: chain.filter((l) => l.depth === 0).map((l) => l.node.id),
      spacingFactor: 1.1,
      padding: 16,
    },
    wheelSensitivity: 0.3,
    style: [
      {
        selector: 'node',
        style: {
          label: 'data(label)',
          'font-size': 10,
          'text-wrap': 'wrap',
          'text-max-width': 140,
          'text-valign': 'bottom',
          'text-margin-y': 4,
          'background-color': '#5b7fa6',
          width: 18,
          height: 18,
          color: '#1b2430',
        },
      },
      { selector: 'node[subject = 1]', style: { 'background-color': '#c2561a', width: 24, height: 24 } },
      {
        selector: 'edge',
        style: {
          label: 'data(label)',
          'font-size': 9,
          'curve-style': 'bezier',
          'target-arrow-shape': 'data(arrow)',
          'line-color': '#8a98a8',
          'target-arrow-color': '#8a98a8',
          color: '#36414d',
          'text-background-color': '#ffffff',
          'text-background-opacity': 0.85,
          'text-background-padding': 2,
        },
      },
    ],
  });
  cy.on('tap', 'node', (e) => open(e.target.id()));
  window.ledgerUi.graph = cy;
}
