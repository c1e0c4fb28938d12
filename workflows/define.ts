// What a team's own operations folder imports, as `retrysafe-server/define`: everything
// needed to write a definition, and nothing else. The folder needs no install of its own:
// the worker's bundler and the API's loader map the name to this module, and `Type` (the
// schema builder) comes from here, so the folder needs no typebox either.
//
//   import { defineOperation, bankCharge, keyedHttpStep, RequestBody, Type } from 'retrysafe-server/define';
//
// One way to write a step: a declared keyed call (`keyedHttpStep`, the bank's `bankCharge`
// built on it), or, for a call that is not one keyed POST, a `StepDefinition` object with
// the same fields; an activity of the folder's own (`call: { kind: 'activity', ... }`) when
// a step needs code. Imported by workflow code: deterministic, like everything it exports.
export { Type, type Static } from 'typebox';
export {
  defineOperation,
  keyedHttpStep,
  type CompensationDefinition,
  type FieldMap,
  type FieldSource,
  type OperationDefinition,
  type SettingDefinition,
  type StepCall,
  type StepDefinition,
} from './definition.js';
export {
  Account,
  Amount,
  bankCharge,
  CHARGE_REFUSALS,
  Currency,
  Description,
  formatAmount,
  FreeText,
  IDENTIFIER_PATTERN,
  RequestBody,
} from './fields.js';
