// What every section is handed: the run's results, the files beside the report, and the
// run's concurrencies (the columns or rows most tables share).
import type { BenchResults } from '../results.js';
import type { ClockHealth } from '../proc.js';

export interface ReportFiles {
  json: string;
  svg: string;
  /** null: the chart could not be rendered as PNG, and the report links the SVG. */
  png: string | null;
}

export interface ReportContext {
  r: BenchResults;
  files: ReportFiles;
  /** The run's concurrencies, in the order of its ratios. */
  cs: number[];
}

/** One section of the report as Markdown lines, each block followed by a blank line; none when its input is absent. */
export type Section = (ctx: ReportContext) => string[];

export function reportContext(r: BenchResults, files: ReportFiles): ReportContext {
  return { r, files, cs: r.ratios.map((row) => row.concurrency) };
}

/** The latency clock's health as checked at the start and, when it was, at the end of the run. */
export function clocksOf(r: BenchResults): ClockHealth[] {
  return [r.machine.clock.start, r.machine.clock.end].filter((c): c is ClockHealth => c !== undefined);
}
