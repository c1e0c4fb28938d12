// What check-definitions says: for each operation type, the version new operations would
// run and the open operations on each version, and the open operations a worker with the
// checked folder could not run. A data object (for --json and tests) and its text.
import type { ProgramNeeds } from '../workflows/program.js';
import { unrunnable, type OpenOperations } from './open-operations.js';

export interface DefinitionsReport {
  taskQueue: string;
  types: Array<{ type: string; version: string; open: Array<{ version: string; count: number; current: boolean }> }>;
  /** Open operations started before definitions were recorded, by type. */
  legacy: Record<string, number>;
  /** One line per group of open operations a worker with this folder could not run. */
  unrunnable: string[];
  truncated: boolean;
}

/** The report on `open`, for definitions whose new versions are `versions`, against what such a worker `has`. */
export function definitionsReport(
  taskQueue: string,
  versions: ReadonlyMap<string, string>,
  open: OpenOperations,
  has: ProgramNeeds,
): DefinitionsReport {
  return {
    taskQueue,
    types: [...versions].map(([type, version]) => ({
      type,
      version,
      open: open.versions
        .filter((v) => v.type === type)
        .map((v) => ({ version: v.version, count: v.count, current: v.version === version })),
    })),
    legacy: Object.fromEntries(open.legacy),
    unrunnable: unrunnable(open, has, [...versions.keys()]),
    truncated: open.truncated,
  };
}

/** The report as a person reads it. */
export function describeReport(report: DefinitionsReport): string {
  const lines = [`task queue ${report.taskQueue}:`];
  for (const { type, version, open } of report.types) {
    const older = open.filter((o) => !o.current);
    const same = open.find((o) => o.current)?.count ?? 0;
    const inFlight = [
      ...(same > 0 ? [`${same} open on it`] : []),
      ...older.map((o) => `${o.count} open on ${o.version}, which they keep`),
    ];
    const changed = older.length > 0 ? 'changed' : 'unchanged';
    lines.push(
      `  ${type}: new operations run definition ${version} (${open.length === 0 ? 'none open' : `${changed}: ${inFlight.join('; ')}`})`,
    );
  }
  for (const [type, count] of Object.entries(report.legacy)) {
    lines.push(`  ${type}: ${count} open operation(s) started before definitions were recorded run the definition above`);
  }
  if (report.truncated) lines.push('  (more versions are open than were read)');
  if (report.unrunnable.length === 0) lines.push('every open operation can finish on a worker with these definitions');
  else lines.push('a worker with these definitions could NOT run:', ...report.unrunnable.map((l) => `  ${l}`));
  return lines.join('\n');
}
