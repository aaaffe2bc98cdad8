// Trimming without end-anchored regexes: `/[,\s]+$/` rescans a long run of those characters from every
// start position inside it (quadratic), which a message of 50,000 commas turns into minutes.

/** `text` without the trailing characters in `chars`. */
export function trimEndOf(text: string, chars: string): string {
  let end = text.length;
  while (end > 0 && chars.includes(text[end - 1] as string)) end--;
  return text.slice(0, end);
}

/** `text` without the leading characters in `chars`. */
export function trimStartOf(text: string, chars: string): string {
  let start = 0;
  while (start < text.length && chars.includes(text[start] as string)) start++;
  return text.slice(start);
}

export const SPACE_AND_PUNCTUATION = ' \t\n\r\u00a0.!?;:,–—-。';
