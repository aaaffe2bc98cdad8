// Edge lags: an ISO 8601 duration (`P3D`, `PT36H`) or a plain interval (`3 days`, `36 hours`,
// `90 minutes`), kept and returned as a canonical ISO 8601 duration. A sentence is not an interval.

const ISO =
  /^P(?!$)(?:(\d+(?:\.\d+)?)Y)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?=\d)(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/i;

const UNIT_SECONDS: Record<string, number> = {
  s: 1,
  sec: 1,
  secs: 1,
  second: 1,
  seconds: 1,
  m: 60,
  min: 60,
  mins: 60,
  minute: 60,
  minutes: 60,
  h: 3600,
  hr: 3600,
  hrs: 3600,
  hour: 3600,
  hours: 3600,
  d: 86400,
  day: 86400,
  days: 86400,
  w: 604800,
  wk: 604800,
  wks: 604800,
  week: 604800,
  weeks: 604800,
};
const CALENDAR_UNITS: Record<string, 'Y' | 'M'> = {
  y: 'Y',
  yr: 'Y',
  yrs: 'Y',
  year: 'Y',
  years: 'Y',
  mo: 'M',
  mon: 'M',
  month: 'M',
  months: 'M',
};

interface Parts {
  years: number;
  months: number;
  seconds: number;
}

function canonical({ years, months, seconds }: Parts): string {
  let out = 'P';
  if (years) out += `${trim(years)}Y`;
  if (months) out += `${trim(months)}M`;
  const days = Math.floor(seconds / 86400);
  let rest = seconds - days * 86400;
  if (days) out += `${days}D`;
  const h = Math.floor(rest / 3600);
  rest -= h * 3600;
  const m = Math.floor(rest / 60);
  rest -= m * 60;
  const s = Math.round(rest * 1e6) / 1e6;
  if (h || m || s) out += `T${h ? `${h}H` : ''}${m ? `${m}M` : ''}${s ? `${trim(s)}S` : ''}`;
  return out === 'P' ? 'PT0S' : out;
}

function trim(n: number): string {
  return String(Math.round(n * 1e6) / 1e6);
}

function fromIso(text: string): Parts | null {
  const m = ISO.exec(text.trim());
  if (!m) return null;
  const n = (i: number): number => Number(m[i] ?? 0);
  return { years: n(1), months: n(2), seconds: n(3) * 604800 + n(4) * 86400 + n(5) * 3600 + n(6) * 60 + n(7) };
}

function fromPlain(text: string): Parts | null {
  const tokens = text
    .trim()
    .toLowerCase()
    .replace(/,|\band\b/g, ' ')
    .match(/(\d+(?:\.\d+)?)\s*([a-z]+)/g);
  if (!tokens) return null;
  const rebuilt = text
    .trim()
    .toLowerCase()
    .replace(/,|\band\b/g, ' ')
    .replace(/\s+/g, '');
  if (tokens.join('').replace(/\s+/g, '') !== rebuilt) return null; // words other than amounts and units
  const parts: Parts = { years: 0, months: 0, seconds: 0 };
  for (const token of tokens) {
    const [, amount, unit] = /^(\d+(?:\.\d+)?)\s*([a-z]+)$/.exec(token) ?? [];
    if (!amount || !unit) return null;
    const secs = UNIT_SECONDS[unit];
    const cal = CALENDAR_UNITS[unit];
    if (secs !== undefined) parts.seconds += Number(amount) * secs;
    else if (cal === 'Y') parts.years += Number(amount);
    else if (cal === 'M') parts.months += Number(amount);
    else return null;
  }
  return parts;
}

/** The canonical ISO 8601 duration of a lag, or null when the text is not an interval. */
export function parseLag(text: string): string | null {
  if (text.length > 200) return null;
  const parts = fromIso(text) ?? fromPlain(text);
  return parts ? canonical(parts) : null;
}
