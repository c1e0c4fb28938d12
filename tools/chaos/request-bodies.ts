// The request bodies of a chaos plan: every required field of a definition's request
// schema filled by what its name means to the sandboxes (vocabulary.ts), spoiled on
// purpose for an operation planned to fail, and the failure codes such an operation may
// end with, derived from its steps' businessErrors.
import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';
import type { OperationDefinition } from '../../workflows/definition.js';
import type { Rng } from './prng.js';
import { AMPLE_ACCOUNTS, AMPLE_SKUS, FIELDS, LEDGER, roleOf, type Item, type Spoil } from './vocabulary.js';

type Properties = Record<string, TSchema & { type?: string; items?: TSchema; properties?: Properties; required?: string[] }>;

/** The item schema of an array field whose objects name a SKU, if the field is one. */
function itemSchemaOf(schema: Properties[string]): (TSchema & { properties: Properties; required?: string[] }) | undefined {
  const items = schema.items as (TSchema & { properties?: Properties; required?: string[] }) | undefined;
  if (schema.type !== 'array' || !items?.properties || !(FIELDS.sku in items.properties)) return undefined;
  return items as TSchema & { properties: Properties; required?: string[] };
}

function propertiesOf(definition: OperationDefinition): Properties {
  return definition.request.properties as unknown as Properties;
}

/** Whether a spoil has a field to go in: a payer, a payee, or items. */
export function fits(definition: OperationDefinition, spoil: Spoil): boolean {
  const required = new Set(definition.request.required ?? []);
  return Object.entries(propertiesOf(definition)).some(([field, schema]) => {
    if (!required.has(field)) return false;
    if (spoil.role === 'sku') return itemSchemaOf(schema) !== undefined;
    return roleOf(field) === spoil.role;
  });
}

export function fingerprintsAmount(definition: OperationDefinition): boolean {
  const fields = definition.fingerprint ?? Object.keys(propertiesOf(definition));
  return (fields as readonly string[]).includes(FIELDS.amount) && FIELDS.amount in propertiesOf(definition);
}

/**
 * A request body for the definition, every required field filled by what its name means
 * to the sandboxes; optional ones (a description) are left out. Payers are drawn first so
 * that a payee is another account. Checked against the schema and the definition's own
 * rules: a body the API would refuse is a bug of the plan, not a finding of the run.
 */
export function requestFor(rng: Rng, definition: OperationDefinition, spoil: Spoil | undefined): Record<string, unknown> {
  const required = new Set(definition.request.required ?? []);
  const fields = Object.entries(propertiesOf(definition)).filter(([field]) => required.has(field));
  const rank = (field: string) => (roleOf(field) === 'payer' ? 0 : 1);
  fields.sort(([a], [b]) => rank(a) - rank(b));
  const body: Record<string, unknown> = {};
  const payers: string[] = [];
  const unknown = (field: string) =>
    new Error(`chaos: cannot fill ${definition.type}.${field}: the sandboxes' vocabulary has no such field`);
  for (const [field, schema] of fields) {
    switch (roleOf(field)) {
      case 'payer': {
        const account = spoil?.role === 'payer' ? spoil.value : rng.pick(AMPLE_ACCOUNTS);
        payers.push(account);
        body[field] = account;
        break;
      }
      case 'payee':
        body[field] = spoil?.role === 'payee' ? spoil.value : rng.pick(AMPLE_ACCOUNTS.filter((a) => !payers.includes(a)));
        break;
      case 'amount':
        body[field] = spoil?.amount ? rng.int(...spoil.amount) : rng.int(100, 9_999);
        break;
      case 'currency':
        body[field] = LEDGER.currency;
        break;
      default: {
        const item = itemSchemaOf(schema);
        if (!item) throw unknown(field);
        for (const inner of item.required ?? []) {
          if (inner !== FIELDS.sku && inner !== FIELDS.quantity) throw unknown(`${field}[].${inner}`);
        }
        const items: Item[] =
          spoil?.role === 'sku'
            ? [{ sku: spoil.value, quantity: rng.int(...(spoil.quantity ?? [1, 1])) }]
            : rng
                .shuffle(AMPLE_SKUS)
                .slice(0, rng.int(1, 2))
                .map((sku) => ({ sku, quantity: rng.int(1, 3) }));
        body[field] = items;
      }
    }
  }
  const refused = [
    ...[...Value.Errors(definition.request, body)].map((e) => `${e.instancePath || '/'} ${e.message}`),
    ...(definition.check?.(body as never) ?? []).map((e) => `${e.field} ${e.message}`),
  ];
  if (refused.length > 0)
    throw new Error(`chaos: the planned ${definition.type} ${JSON.stringify(body)} is invalid: ${refused.join('; ')}`);
  return body;
}

/**
 * The codes an operation meeting `refusal` downstream may fail with: what its steps map
 * that refusal to, or the code of a step fenced on the way there (any step up to the last
 * one that can meet it; which of them does depends on the values).
 */
export function failureCodes(definition: OperationDefinition, refusal: string): string[] {
  const codes = new Set<string>();
  let last = -1;
  definition.steps.forEach((step, i) => {
    const code = step.businessErrors[refusal];
    if (code === undefined) return;
    codes.add(code);
    last = i;
  });
  for (const step of definition.steps.slice(0, last + 1)) codes.add(step.unavailableCode ?? definition.unavailableCode);
  return [...codes];
}
