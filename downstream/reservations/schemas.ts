// The reservation service's request and answer shapes, in TypeBox: requests are validated
// with them (no coercion) and answers serialised through them.
import { Type } from 'typebox';
import { IDENTIFIER_PATTERN } from '../../workflows/identity.js';
import { DEFAULT_HOLD_TTL_SECONDS } from './ledger.js';

export const Sku = Type.String({ minLength: 1, maxLength: 128, pattern: IDENTIFIER_PATTERN });
const Timestamp = Type.String({ format: 'date-time' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

export const StockSchema = Type.Object({
  sku: Type.String(),
  available: Type.Integer(),
  held: Type.Integer(),
});

export const SetStockSchema = Type.Object(
  { available: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'what can still be reserved' }) },
  { additionalProperties: false },
);

const Item = Type.Object({ sku: Sku, quantity: Type.Integer({ minimum: 1, maximum: 1000 }) }, { additionalProperties: false });

export const HoldRequestSchema = Type.Object(
  {
    items: Type.Array(Item, { minItems: 1, maxItems: 100 }),
    ttlSeconds: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 86_400, description: `how long the hold lasts (default ${DEFAULT_HOLD_TTL_SECONDS})` }),
    ),
  },
  { additionalProperties: false },
);

const Status = Type.Union([
  Type.Literal('held'),
  Type.Literal('confirmed'),
  Type.Literal('released'),
  Type.Literal('expired'),
  Type.Literal('fenced'),
  Type.Literal('declined'),
]);

export const HeldReservationSchema = Type.Object({
  id: Type.String(),
  key: Type.String(),
  items: Type.Array(Item),
  status: Type.Literal('held'),
  expiresAt: Timestamp,
  createdAt: Timestamp,
});

export const ReservationViewSchema = Type.Object({
  key: Type.String(),
  reservationId: Nullable(Type.String()),
  items: Type.Array(Item),
  status: Status,
  expiresAt: Nullable(Timestamp),
  createdAt: Timestamp,
  confirmedAt: Nullable(Timestamp),
  releasedAt: Nullable(Timestamp),
});

export const ReservationStateSchema = Type.Object({
  key: Type.String(),
  reservationId: Nullable(Type.String()),
  status: Status,
});
