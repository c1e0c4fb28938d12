// One terminal shared by every process: each child's lines are prefixed with its name
// ([bank], [worker]...), the launcher's own with [retrysafe], colored on a terminal.
import { styleText } from 'node:util';

type Color = Parameters<typeof styleText>[0];

const COLORS: Record<string, Color> = {
  retrysafe: 'bold',
  temporal: 'gray',
  bank: 'yellow',
  reservations: 'green',
  worker: 'cyan',
  api: 'magenta',
  postgres: 'blue',
};
const WIDTH = '[retrysafe]'.length;

export class Output {
  constructor(readonly tty: boolean = Boolean(process.stdout.isTTY)) {}

  style(color: Color, text: string): string {
    return this.tty ? styleText(color, text) : text;
  }

  private prefix(name: string): string {
    // worker-2, temporal-history-1: the color of the role.
    const color = COLORS[name] ?? COLORS[name.replace(/-\d+$/, '')] ?? COLORS[name.split('-')[0]!] ?? 'white';
    return this.style(color, `[${name}]`.padEnd(WIDTH));
  }

  /** A line of a child's output, prefixed with its name. */
  child(name: string, line: string, stream: 'stdout' | 'stderr' = 'stdout'): void {
    (stream === 'stderr' ? process.stderr : process.stdout).write(`${this.prefix(name)} ${line}\n`);
  }

  /** A progress line of the launcher itself. */
  info(message: string): void {
    process.stdout.write(`${this.prefix('retrysafe')} ${message}\n`);
  }

  warn(message: string): void {
    process.stderr.write(`${this.prefix('retrysafe')} ${this.style('yellow', message)}\n`);
  }

  /** The one line that says why the launcher gives up. */
  fatal(message: string): void {
    process.stderr.write(`${this.style('red', `retrysafe: ${message}`)}\n`);
  }

  raw(text: string): void {
    process.stdout.write(text);
  }
}
