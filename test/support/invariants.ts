// The invariants every test of the whole system checks (money moves at most once; no hold
// left by a failed operation, none confirmed without a charge; every operation ends or is
// marked NeedsAttention), per operation, against the downstream ledgers (what actually
// happened), not against what the API says happened. Which ledger rows to read, and what
// counts as an effect in force, comes from each step's definition (its `effect`): a
// succeeded operation has every step's effect in force, a failed one none.
import { builtInCatalog, type DefinitionCatalog } from '../../workflows/catalog.js';
import type { BankHandle, ReservationsHandle } from './stack.js';

export interface AuditedOperation {
  workflowId: string;
  type: string;
  /** The request's amount: what every money row under the operation's keys must say. */
  amount: number;
  operation: Record<string, unknown>;
}

/** Operations loaded from outside the repository, and the base URLs of the services they call. */
export interface OutsideAudit {
  catalog: DefinitionCatalog;
  services: Record<string, string>;
}

/** Returns one line per violated invariant; empty when the operation is consistent. */
export async function auditOperation(
  op: AuditedOperation,
  bank: BankHandle,
  reservations?: ReservationsHandle,
  outside?: OutsideAudit,
): Promise<string[]> {
  const violations: string[] = [];
  const status = op.operation.status;
  const needsAttention = op.operation.needsAttention === true;
  if (status !== 'succeeded' && status !== 'failed' && !needsAttention) {
    violations.push(`${op.workflowId}: not terminal (${String(status)})`);
  }
  const definition = (outside?.catalog ?? builtInCatalog).get(op.type);
  if (!definition) return [...violations, `${op.workflowId}: no definition of ${op.type}`];
  const urls: Record<string, string | undefined> = { ...outside?.services, bank: bank.url, reservations: reservations?.url };
  for (const step of definition.steps) {
    const base = urls[step.service];
    if (!step.effect || !base) continue;
    const key = `${op.workflowId}/${step.keySuffix}`;
    const res = await fetch(`${base}${step.effect.path.replace('{key}', encodeURIComponent(key))}`);
    const row = res.status === 200 ? ((await res.json()) as Record<string, unknown>) : {};
    const state = res.status === 200 ? String(row.status) : 'none';
    const inForce = step.effect.present.includes(state);
    if (status === 'succeeded' && !inForce) violations.push(`${op.workflowId}: succeeded but ${step.name} is ${state}`);
    if (status === 'failed' && inForce) violations.push(`${op.workflowId}: failed but ${step.name} is ${state}`);
    if (inForce && typeof row.amount === 'number' && row.amount !== op.amount) {
      violations.push(`${op.workflowId}: ${step.name} moved ${row.amount}, the request was ${op.amount}`);
    }
  }
  return violations;
}
