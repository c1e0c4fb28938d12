// The workflows the worker registers. Every operation type runs the default workflow, which
// finds its definition in the catalog by the workflow type: `payment`, `checkout`,
// `transfer` and any loaded from outside.
export { runOperation as default } from './interpreter.js';
// Not an operation: the completion webhook an operation of a webhook tenant starts beside itself.
export { notifyCompletion } from './notification.js';
