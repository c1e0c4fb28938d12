// Workflow types registered by the worker; the type name is the operation type.
export { payment } from './payment.js';
export { checkout } from './checkout.js';
