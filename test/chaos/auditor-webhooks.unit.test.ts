// The chaos auditor on completion webhooks: every finished operation reached the receiver
// at least once, every delivery signed, the same body on every redelivery, and that body
// the outcome the API reports.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit } from '../../tools/chaos/auditor.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../tools/chaos/webhook-receiver.js';
import { consistentWorld, eventId, input, useAuditWorld, world } from './audit-world.js';

useAuditWorld();

describe('the chaos auditor, with a completion webhook', () => {
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver({ secret });
  });
  afterAll(async () => {
    await receiver.close();
  });

  async function deliver(id: string, body: unknown, signWith = secret, answer = 204) {
    receiver.answerNext(answer);
    const text = JSON.stringify(body);
    const at = new Date();
    const res = await fetch(receiver.url, {
      method: 'POST',
      headers: {
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(signWith).sign(id, at, text),
      },
      body: text,
    });
    expect(res.status).toBe(answer);
  }

  it('accepts every finished operation delivered once, with redeliveries of the same body, and counts them', async () => {
    const { ops, records } = consistentWorld();
    const pay = { type: 'operation.succeeded', data: world.api[0].get('pay-1') };
    const cart = { type: 'operation.succeeded', data: world.api[0].get('cart-1') };
    await deliver(eventId('pay-1'), pay, secret, 500);
    await deliver(eventId('pay-1'), pay);
    await deliver(eventId('cart-1'), cart);
    const { violations, webhooks } = await audit({ ...input(ops, records), webhooks: receiver });
    expect(violations).toEqual([]);
    expect(webhooks).toEqual({ delivered: 2, posts: 3, redeliveries: 1, refused: 1 });
  });

  it('reports an undelivered event, a bad signature, a changed body and an event that is not the outcome', async () => {
    receiver.deliveries.length = 0;
    const { ops, records } = consistentWorld();
    const pay = { type: 'operation.succeeded', data: world.api[0].get('pay-1') };
    await deliver(eventId('pay-1'), pay, `whsec_${Buffer.alloc(32, 8).toString('base64')}`, 500);
    await deliver(eventId('pay-1'), { ...pay, extra: 1 });
    const { violations } = await audit({ ...input(ops, records), webhooks: receiver });
    expect(violations.filter((v) => v.key === 'pay-1').map((v) => v.rule)).toEqual(
      expect.arrayContaining(['webhooks: every delivery is signed', 'webhooks: a redelivery carries the same body']),
    );
    expect(violations).toContainEqual(expect.objectContaining({ rule: 'webhooks: delivered at least once', key: 'cart-1' }));

    receiver.deliveries.length = 0;
    await deliver(eventId('pay-1'), { type: 'operation.failed', data: { status: 'failed' } });
    await deliver(eventId('cart-1'), { type: 'operation.succeeded', data: world.api[0].get('cart-1') });
    const again = await audit({ ...input(ops, records), webhooks: receiver });
    expect(again.violations).toEqual([expect.objectContaining({ rule: 'webhooks: the event is the outcome', key: 'pay-1' })]);
  });
});
