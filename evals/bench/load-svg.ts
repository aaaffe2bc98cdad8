// The soak picture: RSS (MB) and p99 latency (ms) every 10 s, as a small self-contained SVG with two
// panels sharing the time axis. Written by the load bench; no charting library for two lines.
export interface SoakPoint {
  /** Seconds since the soak began, at the end of the window. */
  t: number;
  rssMb: number;
  p99Ms: number;
  searchP99Ms: number;
}

const W = 640;
const PANEL = 150;
const LEFT = 60;
const RIGHT = 20;
const TOP = 30;
const GAP = 40;

function niceMax(v: number): number {
  if (!Number.isFinite(v) || v <= 0) return 1;
  const step = 10 ** Math.floor(Math.log10(v));
  return Math.ceil((v * 1.1) / step) * step;
}

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function panel(
  points: SoakPoint[],
  top: number,
  series: { value: (p: SoakPoint) => number; color: string; label: string }[],
  unit: string,
): string {
  const tMax = Math.max(10, ...points.map((p) => p.t));
  const yMax = niceMax(Math.max(...series.flatMap((s) => points.map(s.value)).filter(Number.isFinite)));
  const x = (t: number): number => LEFT + ((W - LEFT - RIGHT) * t) / tMax;
  const y = (v: number): number => top + PANEL - (PANEL * v) / yMax;
  const out: string[] = [];
  out.push(`<rect x="${LEFT}" y="${top}" width="${W - LEFT - RIGHT}" height="${PANEL}" fill="none" stroke="#999"/>`);
  for (const frac of [0, 0.5, 1]) {
    const v = yMax * frac;
    out.push(`<text x="${LEFT - 6}" y="${y(v) + 4}" text-anchor="end">${Math.round(v)}</text>`);
    if (frac > 0 && frac < 1) out.push(`<line x1="${LEFT}" x2="${W - RIGHT}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`);
  }
  out.push(`<text x="12" y="${top + PANEL / 2}" transform="rotate(-90 12 ${top + PANEL / 2})" text-anchor="middle">${unit}</text>`);
  series.forEach((s, i) => {
    const pts = points
      .filter((p) => Number.isFinite(s.value(p)))
      .map((p) => `${x(p.t).toFixed(1)},${y(s.value(p)).toFixed(1)}`)
      .join(' ');
    out.push(`<polyline points="${pts}" fill="none" stroke="${s.color}" stroke-width="2"/>`);
    out.push(`<text x="${LEFT + 8 + i * 170}" y="${top + 14}" fill="${s.color}">${escape(s.label)}</text>`);
  });
  return out.join('\n');
}

export function soakSvg(points: SoakPoint[], title: string): string {
  const height = TOP + PANEL + GAP + PANEL + 40;
  const tMax = Math.max(10, ...points.map((p) => p.t));
  const bottom = TOP + PANEL + GAP + PANEL;
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const t = Math.round(tMax * f);
    const x = LEFT + (W - LEFT - RIGHT) * f;
    return `<text x="${x}" y="${bottom + 16}" text-anchor="middle">${t}</text>`;
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${height}" viewBox="0 0 ${W} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="${W}" height="${height}" fill="#fff"/>`,
    `<text x="${LEFT}" y="18" font-size="13">${escape(title)}</text>`,
    panel(points, TOP, [{ value: (p) => p.rssMb, color: '#1f6feb', label: 'RSS (MB)' }], 'MB'),
    panel(
      points,
      TOP + PANEL + GAP,
      [
        { value: (p) => p.p99Ms, color: '#d1242f', label: 'p99, all kinds (ms)' },
        { value: (p) => p.searchP99Ms, color: '#8250df', label: 'p99, searches (ms)' },
      ],
      'ms',
    ),
    ...ticks,
    `<text x="${W / 2}" y="${bottom + 32}" text-anchor="middle">seconds into the soak (one point per 10 s window)</text>`,
    '</svg>',
    '',
  ].join('\n');
}
