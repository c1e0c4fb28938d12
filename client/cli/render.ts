// What the CLI prints: tables for people, the API's JSON for scripts (`--json`).
import Table from 'cli-table3';
import type { Operation, OperationList } from '../lib/index.js';

// No colours in borders or headings (output stays plain when piped or parsed), and no
// rule between rows.
const plain = { head: [], border: [] };
const chars = { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' };

export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

export { shellQuote } from './shell.js';

export function operationTable(op: Operation, notes: { replayed?: boolean } = {}): string {
  const table = new Table({ style: plain, chars });
  const rows: Array<[string, string]> = [
    ['key', op.key],
    ['type', op.type],
    ['status', op.status + (notes.replayed ? ' (replayed: an earlier request with this key started it)' : '')],
    ['step', op.step ?? '-'],
  ];
  if (op.result)
    rows.push([
      'result',
      Object.entries(op.result)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n'),
    ]);
  if (op.error) {
    rows.push(['error', `${op.error.code}: ${op.error.message}`]);
    rows.push(['compensations', op.error.compensations.length > 0 ? op.error.compensations.join(', ') : 'none']);
  }
  if (op.needsAttention) rows.push(['attention', 'a compensation keeps failing: an operator should look']);
  if (op.cancelRequested) {
    rows.push(['cancel', op.status === 'processing' ? 'requested: stops at the next step boundary' : 'requested']);
  }
  rows.push(['created', op.createdAt], ['completed', op.completedAt ?? '-']);
  // An API a release older sends no keyExpiresAt: then the row is left out, not invented.
  if (op.keyExpiresAt !== undefined) rows.push(['key expires', op.keyExpiresAt ?? 'after completion (the retention)']);
  if (op.notification) {
    const { status, attempts } = op.notification;
    rows.push(['webhook', `${status} (${attempts} ${attempts === 1 ? 'attempt' : 'attempts'})`]);
  }
  if (op.links.temporalUi) rows.push(['temporal ui', op.links.temporalUi]);
  table.push(...rows.map(([k, v]) => ({ [k]: v })));
  let out = `${table.toString()}\n`;
  if (op.steps.length > 0) {
    const steps = new Table({ head: ['step', 'status', 'downstream key'], style: plain, chars });
    for (const s of op.steps) steps.push([s.name, s.status, s.downstreamKey]);
    out += `${steps.toString()}\n`;
  }
  return out;
}

export function listTable(list: OperationList): string {
  if (list.operations.length === 0) return 'no operations\n';
  const table = new Table({ head: ['key', 'type', 'status', 'step', 'created'], style: plain, chars });
  for (const op of list.operations)
    table.push([op.key, op.type, op.needsAttention ? `${op.status} (attention)` : op.status, op.step ?? '-', op.createdAt]);
  return `${table.toString()}\n`;
}
