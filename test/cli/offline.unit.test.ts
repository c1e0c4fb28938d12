// The CLI as a process when the API is not there: it gives up at the deadline with exit 4
// and the key to retry with, and on Ctrl-C says how to follow or repeat what may have started.
import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../tools/supervisor/ports.js';
import { runCli, spawnCli } from '../client/helpers.js';
import { listenOnFreePort } from '../support/loopback.js';
import { alicePays } from './in-process.js';

describe('when the API is not there', () => {
  it('pay gives up at the deadline with exit 4, saying the outcome is unknown and how to retry with the same key', async () => {
    const port = await freePort();
    const run = await runCli([...alicePays('offline-1'), '--timeout', '1500ms', '--api-url', `http://127.0.0.1:${port}`]);
    expect(run.exitCode).toBe(4);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`cannot reach http://127.0.0.1:${port}/v1/payments: ECONNREFUSED`);
    expect(run.stderr).toContain('is the API running');
    expect(run.stderr).toContain('retrysafe pay --account acc_alice --amount 1250 --currency EUR --key offline-1');
  });

  it('with --json, the error is JSON on stdout with the key', async () => {
    const port = await freePort();
    const run = await runCli(['status', 'some-key', '--json', '--timeout', '1s', '--api-url', `http://127.0.0.1:${port}`]);
    expect(run.exitCode).toBe(4);
    expect(JSON.parse(run.stdout)).toEqual({
      error: expect.objectContaining({ status: null, code: 'network_error', key: 'some-key' }),
    });
  });

  it('on Ctrl-C while a payment is in flight, prints the key to follow or repeat it with, and exits 130', async () => {
    let arrived: () => void = () => undefined;
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    // An API that takes the request and never answers.
    const silent = createServer(() => arrived());
    const url = await listenOnFreePort(silent);
    try {
      const child = spawnCli([...alicePays('ctrl-c-1'), '--api-url', url]);
      await reached;
      child.kill('SIGINT');
      const result = await child;
      expect(result.exitCode).toBe(130);
      expect(String(result.stderr)).toContain('interrupted: key ctrl-c-1 may have started; see it with: retrysafe wait ctrl-c-1');
      expect(String(result.stderr)).toContain(
        'or repeat it safely with: retrysafe pay --account acc_alice --amount 1250 --currency EUR --key ctrl-c-1',
      );
    } finally {
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    }
  });
});
