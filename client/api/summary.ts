// What the Temporal Web UI shows for an operation at a glance: a one-line static summary
// (`checkout acme/order-42 · EUR 42.00`) and static details (the request), fixed at start.

/** Minor units to a decimal string with the currency's own number of decimals (JPY 0, EUR 2). */
export function formatAmount(amount: number, currency: string): string {
  let digits = 2;
  try {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    // An unknown code never reaches here (validated), but a summary must never fail a start.
  }
  return `${currency} ${(amount / 10 ** digits).toFixed(digits)}`;
}

export function staticSummary(type: string, workflowId: string, request: Record<string, unknown>): string {
  const amount =
    typeof request.amount === 'number' && typeof request.currency === 'string'
      ? ` · ${formatAmount(request.amount, request.currency)}`
      : '';
  return `${type} ${workflowId}${amount}`;
}

export function staticDetails(request: Record<string, unknown>): string {
  const lines = [`account \`${String(request.account)}\``];
  if (Array.isArray(request.items)) {
    for (const item of request.items as Array<{ sku: string; quantity: number }>)
      lines.push(`${item.quantity} × \`${item.sku}\``);
  }
  if (typeof request.description === 'string' && request.description) lines.push(request.description.slice(0, 200));
  return lines.join('\n\n');
}
