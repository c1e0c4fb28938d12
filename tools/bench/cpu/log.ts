// The CPU bench's progress line on stderr (stdout carries the report).
export function log(line: string): void {
  console.error(`[cpu ${new Date().toISOString().slice(11, 19)}] ${line}`);
}
