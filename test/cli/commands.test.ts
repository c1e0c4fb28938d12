// Every CLI command as a process against the real stack. `--json` output is parsed; exit
// codes are checked; effects are counted at the bank and the reservation service.
import { describe, expect, it } from 'vitest';
import { createClient } from '../../client/lib/index.js';
import { startApi } from '../support/api.js';
import { useFullStack } from '../support/full-stack.js';
import { startWorker, uniqueId, type WorkerHandle } from '../support/stack.js';
import { failedPayment, runCli, type CliRun } from '../client/helpers.js';

const SECRET = 'secret-cli-0123456789ab';

const stack = useFullStack({ name: 'cli', apiKeys: `${SECRET}=shop`, stepDeadlineMs: 20_000 });

/** The CLI with the API's address and key in the environment, as a user would set them. */
const cli = (args: string[], env: Record<string, string> = {}): Promise<CliRun> =>
  runCli(args, { RETRYSAFE_API_URL: stack.api.url, RETRYSAFE_API_KEY: SECRET, ...env });

const newAccount = (balance: number) => stack.bank.newAccount(balance);

/** The library, to set things up without paying for a process. */
const lib = () => createClient({ baseUrl: stack.api.url, apiKey: SECRET });

const parse = (run: CliRun) => JSON.parse(run.stdout) as Record<string, unknown> & { error?: Record<string, unknown> };

describe('retrysafe pay', () => {
  it('pays once: --json prints the operation; the same command with the same --key replays it (a table for people); charged once', async () => {
    const account = await newAccount(10_000);
    const key = uniqueId('cli-pay');
    const args = ['pay', '--account', account, '--amount', '1250', '--currency', 'eur', '--key', key];
    const first = await cli([...args, '--json']);
    expect(first.exitCode, first.stderr).toBe(0);
    const op = parse(first);
    expect(op).toMatchObject({
      key,
      type: 'payment',
      status: 'succeeded',
      steps: [{ name: 'charge_payment', downstreamKey: `shop/${key}/charge` }],
    });
    const chargeId = (op.result as Record<string, string>).chargeId;
    expect(chargeId).toMatch(/^ch_/);

    const again = await cli(args);
    expect(again.exitCode).toBe(0);
    expect(again.stderr).toBe('');
    expect(again.stdout).toMatch(new RegExp(`│ key\\s+│ ${key}\\s+│`));
    expect(again.stdout).toMatch(/│ status\s+│ succeeded \(replayed: an earlier request with this key started it\)/);
    expect(again.stdout).toContain(`chargeId=${chargeId}`);
    expect(again.stdout).toMatch(new RegExp(`│ charge_payment\\s+│ completed\\s+│ shop/${key}/charge\\s+│`));
    expect(await stack.bank.balance(account)).toBe(8_750);
    expect((await stack.bank.charge(`shop/${key}/charge`)).body).toMatchObject({
      chargeId,
      amount: 1250,
      currency: 'EUR',
      status: 'captured',
    });
  });

  it('a declined payment exits 1 with the business code; nothing is charged', async () => {
    const account = await newAccount(100);
    const run = await cli(['pay', '--account', account, '--amount', '1250', '--currency', 'EUR', '--json']);
    expect(run.exitCode).toBe(1);
    expect(parse(run)).toMatchObject({ status: 'failed', error: { code: 'insufficient_funds' } });
    expect(run.stderr).toContain('failed: insufficient_funds');
    expect(await stack.bank.balance(account)).toBe(100);
  });

  it('the same --key with another amount exits 4 with the 422 and its differences', async () => {
    const account = await newAccount(10_000);
    const key = uniqueId('cli-422');
    await lib().payments.create({ account, amount: 1250, currency: 'EUR' }, { idempotencyKey: key });
    const run = await cli(['pay', '--account', account, '--amount', '1300', '--currency', 'EUR', '--key', key, '--json']);
    expect(run.exitCode).toBe(4);
    expect(parse(run).error).toMatchObject({ status: 422, code: 'idempotency_key_reused', key, differences: ['amount'] });
    expect(run.stderr).toContain('differences: amount');
    expect(await stack.bank.balance(account)).toBe(8_750);
  });

  it('without an API key exits 4 and says how to send one', async () => {
    const run = await runCli(['pay', '--account', 'acc_x', '--amount', '5', '--currency', 'EUR', '--api-url', stack.api.url]);
    expect(run.exitCode).toBe(4);
    expect(run.stderr).toContain('401 unauthorized');
    expect(run.stderr).toContain('--api-key or RETRYSAFE_API_KEY');
  });

  it('past --timeout exits 3 with the key and the wait hint; `wait <key>` exits 0 once a worker runs it, charged once', async () => {
    // A task queue no worker polls yet: the payment stays open for as long as the test needs.
    const idleQueue = uniqueId('cli-idle');
    const idleApi = await startApi({ taskQueue: idleQueue, apiKeys: `${SECRET}=shop` });
    let lateWorker: WorkerHandle | undefined;
    try {
      const account = await newAccount(10_000);
      const key = uniqueId('cli-slow');
      const env = { RETRYSAFE_API_URL: idleApi.url };
      const run = await cli(
        ['pay', '--account', account, '--amount', '1250', '--currency', 'EUR', '--key', key, '--timeout', '1500ms', '--json'],
        env,
      );
      expect(run.exitCode, run.stderr).toBe(3);
      expect(parse(run)).toMatchObject({ key, status: 'processing' });
      expect(run.stderr).toContain(`still processing after 1.5s: key ${key} (step: not started yet)`);
      expect(run.stderr).toContain(`retrysafe wait ${key}`);

      const processing = await cli(['status', key, '--json'], env);
      expect(processing.exitCode).toBe(3);
      expect(parse(processing)).toMatchObject({ key, status: 'processing' });
      expect(await stack.bank.balance(account)).toBe(10_000);

      lateWorker = await startWorker({ taskQueue: idleQueue, bankUrl: stack.bank.url, reservationsUrl: stack.reservations.url });
      const waited = await cli(['wait', key, '--json'], env);
      expect(waited.exitCode, waited.stderr).toBe(0);
      expect(parse(waited)).toMatchObject({ key, status: 'succeeded' });
      expect(await stack.bank.balance(account)).toBe(8_750);
    } finally {
      await idleApi.close();
      await lateWorker?.stop();
    }
  });
});

describe('retrysafe checkout', () => {
  it('succeeds with one --item per sku, and a declined one exits 1 and gives the stock back', async () => {
    const rich = await newAccount(100_000);
    const poor = await newAccount(1_000);
    const sku = uniqueId('sku');
    const pen = uniqueId('pen');
    await Promise.all([stack.reservations.setStock(sku, 10), stack.reservations.setStock(pen, 10)]);
    const [ok, declined] = await Promise.all([
      cli([
        'checkout',
        '--account',
        rich,
        '--amount',
        '4200',
        '--currency',
        'EUR',
        '--item',
        `${sku}:2`,
        '--item',
        `${pen}:1`,
        '--json',
      ]),
      cli(['checkout', '--account', poor, '--amount', '4200', '--currency', 'EUR', '--item', `${sku}:3`, '--json']),
    ]);
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(parse(ok)).toMatchObject({ type: 'checkout', status: 'succeeded' });
    expect(declined.exitCode).toBe(1);
    expect(parse(declined)).toMatchObject({
      status: 'failed',
      error: { code: 'insufficient_funds', compensations: ['release_reservation'] },
    });
    expect(declined.stderr).toContain('compensations: release_reservation');
    expect(await stack.reservations.stock(sku)).toEqual({ available: 8, held: 0 });
    expect(await stack.reservations.stock(pen)).toEqual({ available: 9, held: 0 });
    expect(await stack.bank.balance(rich)).toBe(95_800);
    expect(await stack.bank.balance(poor)).toBe(1_000);
  });
});

describe('retrysafe status and list', () => {
  it('status of a failed operation exits 1; of an unknown key exits 4 with operation_not_found', async () => {
    const key = await failedPayment(lib(), stack.bank, 'cli-failed');
    const failed = await cli(['status', key]);
    const unknown = await cli(['status', uniqueId('nobody'), '--json']);
    expect(failed.exitCode).toBe(1);
    expect(failed.stdout).toMatch(/│ error\s+│ insufficient_funds: /);
    expect(unknown.exitCode).toBe(4);
    expect(parse(unknown).error).toMatchObject({ status: 404, code: 'operation_not_found' });
  });

  it("list --json returns the tenant's operations with the filters applied; the table has one row each", async () => {
    const account = await newAccount(10_000);
    const key = uniqueId('cli-list');
    const rs = lib();
    await rs.payments.create({ account, amount: 7, currency: 'EUR' }, { idempotencyKey: key });
    // Visibility is eventually consistent: wait (through the library) until the payment is listed.
    for (let i = 0; i < 40; i++) {
      if ((await rs.operations.list({ type: 'payment', limit: 100 })).operations.some((o) => o.key === key)) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const json = await cli(['list', '--type', 'payment', '--status', 'succeeded', '--limit', '100', '--json']);
    const table = await cli(['list', '--type', 'payment', '--limit', '100']);
    expect(json.exitCode).toBe(0);
    const page = parse(json) as unknown as {
      operations: Array<{ key: string; type: string; status: string }>;
      nextCursor: string | null;
    };
    expect(page.operations.some((o) => o.key === key)).toBe(true);
    expect(page.operations.every((o) => o.type === 'payment' && o.status === 'succeeded')).toBe(true);
    expect(table.exitCode).toBe(0);
    expect(table.stdout).toMatch(/│ key\s+│ type\s+│ status\s+│ step\s+│ created/);
    expect(table.stdout).toContain(key);
  });
});
