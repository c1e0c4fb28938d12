// The banner the launcher prints once the stack is up: every part's address, the mode (dev
// or API keys), a curl to try, and on the cluster both APIs and where PostgreSQL and the
// logs are. A secret never appears in it.
import { describe, expect, it } from 'vitest';
import { renderBanner } from '../../tools/launcher/banner.js';
import { loadLauncherConfig } from '../../tools/launcher/options.js';
import { Output } from '../../tools/launcher/output.js';
import { stackParts } from '../../tools/launcher/parts.js';
import { CLUSTER, EMBEDDED, FAKE_ROOT, stackOf } from './fixtures.js';

/** The lines of `wanted` the text does not contain: none, when the banner says all of them. */
const missing = (text: string, wanted: string[]) => wanted.filter((w) => !text.includes(w));

describe('banner', () => {
  const config = loadLauncherConfig(FAKE_ROOT, {});
  const output = new Output(false);

  it('in dev mode, lists every part and says so, with a curl that needs no key', () => {
    const services = stackParts(stackOf(config));
    const text = renderBanner(
      { config, settings: { apiKeyCount: 0, tenants: [] }, temporal: EMBEDDED, services, readyMs: 6_250 },
      output,
    );
    expect(text).toContain('retrysafe is ready in 6.3 s');
    expect(
      missing(text, [
        'http://localhost:3000/docs',
        'http://localhost:3000/openapi.json',
        'http://localhost:8233',
        'http://localhost:4001',
        'http://127.0.0.1:9464/metrics',
        'temporal.db, bank.db',
        'dev mode',
      ]),
    ).toEqual([]);
    expect(text).toContain(
      `curl -s -X POST http://localhost:3000/v1/payments -H 'Idempotency-Key: demo-1' -H 'Content-Type: application/json' -d '{"account":"acc_alice","amount":1250,"currency":"EUR"}'`,
    );
    expect(text).not.toContain('Authorization');
    expect(text).not.toContain('fault injection');
    expect(text).not.toContain('Zipkin');
  });

  it("with --traces, shows the Zipkin UI and where an operation's trace is", () => {
    const c = loadLauncherConfig(FAKE_ROOT, {}, { traces: true });
    const services = stackParts(stackOf(c));
    const text = renderBanner(
      {
        config: c,
        settings: { apiKeyCount: 0, tenants: [] },
        temporal: EMBEDDED,
        services,
        readyMs: 9_000,
        traces: { ui: 'http://localhost:9411/zipkin/' },
      },
      output,
    );
    expect(text).toMatch(/^ {2}Traces +http:\/\/localhost:9411\/zipkin\/ +Zipkin/m);
    expect(text).toContain('http://localhost:9411/zipkin/traces/<traceId>');
    expect(text).toContain('GET /v1/operations/{key}');
  });

  it('on the cluster, lists both APIs (the curl on the first), the cluster, PostgreSQL and its logs', () => {
    const c = loadLauncherConfig(FAKE_ROOT, {}, { cluster: true });
    const services = stackParts(stackOf(c, { temporal: CLUSTER }));
    const text = renderBanner(
      { config: c, settings: { apiKeyCount: 0, tenants: [] }, temporal: CLUSTER, services, readyMs: 30_000 },
      output,
    );
    expect(
      missing(text, [
        'API 1           http://localhost:3000',
        'API 2           http://localhost:3001',
        "namespace default, the cluster's frontend",
        'postgres, temporal-frontend',
        '127.0.0.1:7235',
        '/repo/.data/cluster/logs',
        'http://127.0.0.1:9465/metrics',
        'postgres/, logs/, bank.db, reservations.db',
        `curl -s -X POST http://localhost:3000/v1/payments`,
      ]),
    ).toEqual([]);
    expect(text).not.toContain('temporal.db');
  });

  it('with API keys, adds the Authorization hint and names the tenants, never a secret', () => {
    const services = stackParts(stackOf(config, { faults: true }));
    const text = renderBanner(
      { config, settings: { apiKeyCount: 2, tenants: ['acme'] }, temporal: EMBEDDED, services, readyMs: 1 },
      output,
    );
    expect(text).toContain("-H 'Authorization: Bearer <a secret from RETRYSAFE_API_KEYS>'");
    expect(text).toContain('2 configured (tenants: acme)');
    expect(text).toContain('fault injection on');
  });
});
