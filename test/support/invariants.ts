// The invariants every test of the whole system checks (money moves at most once; no hold
// left by a failed operation, none confirmed without a charge; every operation ends or is
// marked NeedsAttention), per operation, against the downstream ledgers (what actually
// happened), not against what the API says happened.
import type { BankHandle, ReservationsHandle } from './stack.js';

export interface AuditedOperation {
  workflowId: string;
  type: 'payment' | 'checkout';
  amount: number;
  operation: Record<string, unknown>;
}

/** Returns one line per violated invariant; empty when the operation is consistent. */
export async function auditOperation(
  op: AuditedOperation,
  bank: BankHandle,
  reservations?: ReservationsHandle,
): Promise<string[]> {
  const violations: string[] = [];
  const status = op.operation.status;
  const needsAttention = op.operation.needsAttention === true;
  if (status !== 'succeeded' && status !== 'failed' && !needsAttention) {
    violations.push(`${op.workflowId}: not terminal (${String(status)})`);
  }
  const charge = await bank.charge(`${op.workflowId}/charge`);
  const netCharged = charge.status === 200 && charge.body.status === 'captured' ? Number(charge.body.amount) : 0;
  const expected = status === 'succeeded' ? op.amount : 0;
  if (status !== 'processing' && netCharged !== expected) {
    violations.push(`${op.workflowId}: ${String(status)} but net charged ${netCharged}, expected ${expected}`);
  }
  if (op.type === 'checkout' && reservations) {
    const hold = await reservations.reservation(`${op.workflowId}/reserve`);
    const holdStatus = hold.status === 200 ? String(hold.body.status) : 'none';
    if (status === 'failed' && holdStatus === 'held')
      violations.push(`${op.workflowId}: failed but its reservation is still held`);
    if (status === 'failed' && holdStatus === 'confirmed')
      violations.push(`${op.workflowId}: failed but its reservation is confirmed`);
    if (holdStatus === 'confirmed' && netCharged === 0)
      violations.push(`${op.workflowId}: reservation confirmed without a charge`);
    if (status === 'succeeded' && holdStatus !== 'confirmed')
      violations.push(`${op.workflowId}: succeeded but reservation is ${holdStatus}`);
  }
  return violations;
}
