// Instants and certificates in words, for people: "4 blocks hidden: learned after 2024-03-01; 2 rows
// backfilled in 1 batch".
const ISO = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(:\d{2})?(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

export function shortInstant(s) {
  if (!s) return '—';
  const m = ISO.exec(s);
  if (!m) return s;
  const [, date, hm, sec = ':00', frac = '', zone] = m;
  const z = zone === 'Z' ? 'UTC' : zone;
  if (hm === '23:59' && sec === ':59' && /^\.9+$/.test(frac)) return date; // a widened date
  if (!/[1-9]/.test(frac)) return sec === ':00' ? `${date} ${hm} ${z}` : `${date} ${hm}${sec} ${z}`;
  return `${date} ${hm}${sec}${frac.slice(0, 4)} ${z}`;
}

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function certificateWords(cert) {
  if (!cert) return '';
  const parts = [];
  const m = cert.masked ?? {};
  const hidden = [];
  if (m.node) hidden.push(plural(m.node, 'block'));
  if (m.edge) hidden.push(plural(m.edge, 'link'));
  if (m.verdict) hidden.push(plural(m.verdict, 'verdict'));
  if (hidden.length) parts.push(`${hidden.join(', ')} hidden: learned after ${shortInstant(cert.as_of)}`);
  else parts.push(`Nothing hidden as of ${shortInstant(cert.as_of)}`);
  if (cert.invalidated) parts.push(`${plural(cert.invalidated, 'invalidated version')} left out`);
  if (cert.backfill) parts.push(`${plural(cert.backfill.rows, 'row')} backfilled in ${plural(cert.backfill.batches, 'batch', 'batches')}`);
  if (cert.rules_as_of) parts.push(`rules as of ${shortInstant(cert.rules_as_of)}`);
  return parts.join('; ');
}

export { plural };
