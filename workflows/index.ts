// Workflow types registered by the worker; the type name is the operation type.
export { payment } from './payment.js';
export { checkout } from './checkout.js';
// Not an operation: the completion webhook an operation of a webhook tenant starts beside itself.
export { notifyCompletion } from './notification.js';
