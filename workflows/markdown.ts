// Tenant text in the operator's console. The Temporal Web UI renders an execution's summary
// and details as markdown, and what a tenant sent (a key, a description) is in them: left
// as it is, a backtick ends a code span and `[x](https://…)` becomes a link there. These two
// helpers are how such text goes into markdown; pure, so workflow code uses them too.

/** Every ASCII punctuation character: CommonMark lets a backslash escape each of them. */
const PUNCTUATION = /[!-/:-@[-`{-~]/g;
/** A line break would end a code span's paragraph, or start a block (a heading, a list). */
const LINE_BREAKS = /\r\n?|\n/g;

/**
 * Text that renders as exactly what it says: every ASCII punctuation character escaped, so
 * nothing in it can open emphasis, a link, an autolink (`:` and `.` are escaped), HTML, a
 * heading or a list. For text outside a code span. Line breaks become spaces (free text
 * holds none: the request schemas refuse control characters).
 */
export function markdownText(text: string): string {
  return text.replace(LINE_BREAKS, ' ').replace(PUNCTUATION, '\\$&');
}

/**
 * `raw` as one code span, whatever it holds: fenced by more backticks than its longest run
 * of them (CommonMark's rule), padded with a space where it starts or ends with a backtick
 * or a space (one space each side is stripped again when rendered); line breaks become
 * spaces.
 */
export function markdownCode(raw: string): string {
  const text = raw.replace(LINE_BREAKS, ' ');
  let longest = 0;
  for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  const fence = '`'.repeat(longest + 1);
  const pad = /^[` ]|[` ]$/.test(text) ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}
