// The Web UI's one line about an operation, fixed at its start: the amount in its currency's
// own decimals, the same however often the API has been asked for one.
import { describe, expect, it } from 'vitest';
import { staticSummary } from '../../client/api/requests.js';
import { builtInCatalog } from '../../workflows/catalog.js';

describe('the summary of a start', () => {
  const payment = builtInCatalog.get('payment')!;
  const line = (currency: string) => staticSummary(payment, 'acme/order-42', { account: 'acc_alice', amount: 4200, currency });

  it("writes the amount with the currency's decimals (EUR 2, JPY 0, BHD 3), the same on every call", () => {
    for (let call = 0; call < 2; call++) {
      expect(line('EUR')).toBe('payment `acme/order-42` · EUR 42.00');
      expect(line('JPY')).toBe('payment `acme/order-42` · JPY 4200');
      expect(line('BHD')).toBe('payment `acme/order-42` · BHD 4.200');
    }
  });
});
