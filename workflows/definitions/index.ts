// The built-in operations, in the order the API lists them.
import { checkout } from './checkout.js';
import { payment } from './payment.js';
import { transfer } from './transfer.js';

export const BUILT_IN_DEFINITIONS = [payment, checkout, transfer] as const;
