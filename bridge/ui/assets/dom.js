// DOM building that treats every value as text. Everything the page shows was written by someone's
// agent, so strings only ever become text nodes or attribute values, never markup (no innerHTML).
export const $ = (id) => document.getElementById(id);

/** el('li', {class: 'x', dataset: {id}, onclick: fn}, 'text', childNode, [more]) */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') node.addEventListener(k.slice(2), v);
    else if (k === 'class') node.className = v;
    else if (k === 'dataset') Object.assign(node.dataset, v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Replaces a node's children. */
export function fill(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

/** A button that opens a block by id (keyboard reachable, unlike a canvas node). */
export function blockLink(id, open, label) {
  return el('button', { type: 'button', class: 'link', dataset: { open: id }, onclick: () => open(id) }, label ?? id);
}

/** JSON shown as text in a <pre>. */
export function jsonText(value) {
  return el('pre', { class: 'json' }, JSON.stringify(value, null, 2));
}
