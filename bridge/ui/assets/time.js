// The as_of slider: STEPS positions from the tenant's first knowledge instant to the server's `now`.
// The two ends map to those exact instants (microseconds kept, as the server wrote them); positions in
// between are interpolated to the millisecond, which is as fine as a hand on a slider gets.
export const STEPS = 1000;

const ms = (s) => Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(s) ? `${s}T23:59:59.999Z` : s);

export function instantAt(pos, range) {
  if (pos <= 0) return range.first;
  if (pos >= STEPS) return range.now;
  const a = ms(range.first);
  const b = ms(range.now);
  return new Date(a + ((b - a) * pos) / STEPS).toISOString();
}

export function positionOf(instant, range) {
  if (!instant || instant === range.now) return STEPS;
  if (instant === range.first) return 0;
  const a = ms(range.first);
  const b = ms(range.now);
  const t = ms(instant);
  if (!Number.isFinite(t) || b <= a) return STEPS;
  return Math.max(0, Math.min(STEPS, Math.round(((t - a) / (b - a)) * STEPS)));
}
