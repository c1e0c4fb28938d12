// The log redaction list covers every secret a process holds, wherever a log line would
// carry it: Authorization headers of requests and answers, the API keys, the metrics token,
// the webhook signing secrets (as variables and as parsed config), Temporal's API key and
// the private key of its TLS client certificate. Applied by a real pino logger, as
// createLogger applies it.
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { REDACT_PATHS } from '../../common/logger.js';

function logged(object: Record<string, unknown>): string {
  let out = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      out += chunk.toString();
      done();
    },
  });
  pino({ redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink).info(object, 'a line');
  return out;
}

describe('the redaction list', () => {
  const secrets = Array.from({ length: 16 }, (_, i) => `SECRET_${i}_${'x'.repeat(8)}`);
  const s = (i: number) => secrets[i]!;

  it('hides every secret a process holds, in the shapes it is logged in', () => {
    const line = logged({
      req: { headers: { authorization: `Bearer ${s(0)}` } },
      res: { headers: { authorization: s(1) } },
      headers: { Authorization: s(2) },
      config: { apiKeys: [{ secret: s(3), tenant: 'acme' }], metricsToken: s(4), webhooks: { secrets: { acme: [s(5)] } } },
      connectionOptions: { apiKey: s(6), tls: { clientCertPair: { crt: 'public', key: s(7) } } },
      TEMPORAL_API_KEY: s(8),
      RETRYSAFE_API_KEYS: s(9),
      RETRYSAFE_METRICS_TOKEN: s(10),
      RETRYSAFE_WEBHOOK_SECRETS: s(11),
      env: { TEMPORAL_TLS_CLIENT_KEY_DATA: s(12), TEMPORAL_API_KEY: s(13) },
      webhooks: { secrets: [s(14)] },
      secret: s(15),
    });
    for (const secret of secrets) expect(line).not.toContain(secret);
    expect(line).toContain('[redacted]');
    // What is not a secret stays readable.
    expect(JSON.parse(line)).toMatchObject({
      config: { apiKeys: '[redacted]' },
      connectionOptions: { tls: { clientCertPair: { crt: 'public' } } },
    });
  });

  it('walks no object a line holds beyond the paths it names: a DOMException in a line is written, not thrown', () => {
    const timedOut = AbortSignal.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')).reason;
    expect(() => logged({ error: timedOut, nested: { cause: timedOut, deeper: { cause: timedOut } } })).not.toThrow();
  });
});
