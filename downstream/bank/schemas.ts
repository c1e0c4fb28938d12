// The bank's request and answer shapes, in TypeBox: requests are validated with them (no
// coercion) and answers serialised through them.
import { Type } from 'typebox';

const MAX_AMOUNT = Number.MAX_SAFE_INTEGER;
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code, e.g. EUR' });
const AccountId = Type.String({ minLength: 1, maxLength: 128 });
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

export const ChargeRequestSchema = Type.Object(
  {
    account: AccountId,
    amount: Type.Integer({ minimum: 1, maximum: MAX_AMOUNT, description: 'minor units' }),
    currency: Currency,
  },
  { additionalProperties: false },
);

/** A credit is validated exactly as a charge: the same account, amount and currency rules. */
export const CreditRequestSchema = ChargeRequestSchema;

const ChargeStatus = Type.Union([
  Type.Literal('captured'),
  Type.Literal('reversed'),
  Type.Literal('fenced'),
  Type.Literal('declined'),
]);

export const CapturedChargeSchema = Type.Object({
  id: Type.String(),
  key: Type.String(),
  account: Type.String(),
  amount: Type.Integer(),
  currency: Type.String(),
  status: Type.Literal('captured'),
  createdAt: Type.String({ format: 'date-time' }),
});

export const ChargeViewSchema = Type.Object({
  key: Type.String(),
  chargeId: Nullable(Type.String()),
  account: Nullable(Type.String()),
  amount: Nullable(Type.Integer()),
  currency: Nullable(Type.String()),
  status: ChargeStatus,
  createdAt: Type.String({ format: 'date-time' }),
  reversedAt: Nullable(Type.String({ format: 'date-time' })),
});

export const ReversalSchema = Type.Object({
  key: Type.String(),
  chargeId: Nullable(Type.String()),
  status: ChargeStatus,
  refunded: Type.Integer(),
});

const CreditStatus = Type.Union([
  Type.Literal('credited'),
  Type.Literal('reversed'),
  Type.Literal('fenced'),
  Type.Literal('declined'),
]);

export const CreditSchema = Type.Object({
  id: Type.String(),
  key: Type.String(),
  account: Type.String(),
  amount: Type.Integer(),
  currency: Type.String(),
  status: Type.Literal('credited'),
  createdAt: Type.String({ format: 'date-time' }),
});

export const CreditViewSchema = Type.Object({
  key: Type.String(),
  creditId: Nullable(Type.String()),
  account: Nullable(Type.String()),
  amount: Nullable(Type.Integer()),
  currency: Nullable(Type.String()),
  status: CreditStatus,
  createdAt: Type.String({ format: 'date-time' }),
  reversedAt: Nullable(Type.String({ format: 'date-time' })),
});

export const CreditReversalSchema = Type.Object({
  key: Type.String(),
  creditId: Nullable(Type.String()),
  status: Type.Union([Type.Literal('reversed'), Type.Literal('fenced'), Type.Literal('declined')]),
  reclaimed: Type.Integer(),
});
