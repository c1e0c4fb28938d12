// What an operation key may be: 1-255 visible ASCII characters, and not `.` or `..` (as a
// path segment they would name another resource). The client checks a key
// before sending it, so a key the API would refuse never leaves the process (and never
// half-starts anything); test/client/keys.unit.test.ts holds this rule to the API's own.

export const MAX_KEY_LENGTH = 255;

const KEY = new RegExp(`^[\\x21-\\x7e]{1,${MAX_KEY_LENGTH}}$`);

/** Whether `key` (given to the client, or typed on the command line) could name an operation at all. */
export function isValidKey(key: string): boolean {
  return KEY.test(key) && key !== '.' && key !== '..';
}
