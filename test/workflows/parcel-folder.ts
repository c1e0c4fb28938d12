// An outside folder's operation for tests of definitions that change: a parcel is a charge at
// the bank and, before the change, a shipment at the team's shipping service. Written as a
// team writes it, importing retrysafe by its package name.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function parcelSource(withShipment: boolean): string {
  const shipment = `keyedHttpStep({ name: 'parcel_ship', keySuffix: 'ship', service: 'shipping', collection: '/shipments', body: {},
        businessErrors: {}, undo: { name: 'parcel_unship', action: 'cancel' }, result: {}, present: ['created'] }),`;
  return `
import { Account, Amount, bankCharge, Currency, defineOperation, keyedHttpStep, RequestBody } from 'retrysafe-server/define';
export const operations = [
  defineOperation({
    type: 'parcel',
    plural: 'parcels',
    description: 'charge, then ship',
    request: RequestBody('a parcel', { account: Account('who pays'), amount: Amount, currency: Currency }),
    steps: [
      bankCharge({ name: 'parcel_charge', keySuffix: 'charge', account: 'account', undo: 'parcel_refund', resultField: 'chargeId' }),
      ${withShipment ? shipment : ''}
    ],
    unavailableCode: 'parcel_unavailable',
  }),
];
`;
}

/** The folder `dir`, holding the parcel's operations.ts with or without its shipment. */
export function writeParcelFolder(dir: string, withShipment: boolean): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'operations.ts'), parcelSource(withShipment));
  return dir;
}
