// A word as a POSIX shell reads it back: bare when safe, else single-quoted. Used to print a
// command a user can paste to repeat a call safely (same key).
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9._:@/+=-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
