// The bank's request and answer shapes, in TypeBox: requests are validated with them (no
// coercion) and answers serialised through them.
import { Type } from 'typebox';
import { IDENTIFIER_PATTERN } from '../../workflows/identity.js';

const MAX_AMOUNT = Number.MAX_SAFE_INTEGER;
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code, e.g. EUR' });
const AccountId = Type.String({ minLength: 1, maxLength: 128, pattern: IDENTIFIER_PATTERN });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

/** Opening or replacing an account (sandbox set-up): never below zero. */
export const AccountSchema = Type.Object(
  { id: AccountId, currency: Currency, balance: Type.Integer({ minimum: 0, maximum: MAX_AMOUNT }) },
  { additionalProperties: false },
);

/** An account as it stands: below zero once a credit it had spent was taken back. */
export const AccountViewSchema = Type.Object({
  id: Type.String(),
  currency: Type.String(),
  balance: Type.Integer({ description: 'minor units; negative after a clawback of money already spent' }),
});

/** A charge and a credit are validated alike: the same account, amount and currency rules. */
const MovementRequestSchema = Type.Object(
  {
    account: AccountId,
    amount: Type.Integer({ minimum: 1, maximum: MAX_AMOUNT, description: 'minor units' }),
    currency: Currency,
  },
  { additionalProperties: false },
);

const Timestamp = Type.String({ format: 'date-time' });

/**
 * The shapes of one kind of movement: its request, its answer as made (`captured`,
 * `credited`), as read by key (`chargeId` null when none was made) and its reversal, which
 * names the money moved back (`refunded`, `reclaimed`).
 */
function movementSchemas(noun: 'charge' | 'credit', applied: 'captured' | 'credited', movedBack: 'refunded' | 'reclaimed') {
  const id = `${noun}Id`;
  const Reversed = [Type.Literal('reversed'), Type.Literal('fenced'), Type.Literal('declined')];
  return {
    request: MovementRequestSchema,
    applied: Type.Object({
      id: Type.String(),
      key: Type.String(),
      account: Type.String(),
      amount: Type.Integer(),
      currency: Type.String(),
      status: Type.Literal(applied),
      createdAt: Timestamp,
    }),
    view: Type.Object({
      key: Type.String(),
      [id]: Nullable(Type.String()),
      account: Nullable(Type.String()),
      amount: Nullable(Type.Integer()),
      currency: Nullable(Type.String()),
      status: Type.Union([Type.Literal(applied), ...Reversed]),
      createdAt: Timestamp,
      reversedAt: Nullable(Timestamp),
    }),
    reversal: Type.Object({
      key: Type.String(),
      [id]: Nullable(Type.String()),
      status: Type.Union(Reversed),
      [movedBack]: Type.Integer(),
    }),
  };
}

export const MOVEMENT_SCHEMAS = {
  charge: movementSchemas('charge', 'captured', 'refunded'),
  credit: movementSchemas('credit', 'credited', 'reclaimed'),
};
