// Bad arguments to the CLI, with no stack: one line naming the problem, then a usage line,
// exit 2, and nothing sent. An operation's command is made from its request schema
// (client/cli/type-commands.ts), so what the schema refuses is a usage error too.
import { describe, expect, it, vi } from 'vitest';
import { runCli } from '../client/helpers.js';
import { useRequestCounter } from '../support/loopback.js';
import { runHere } from './in-process.js';

// A stand-in API that only counts: a usage error must not reach it.
const counter = useRequestCounter();

// Command lines the CLI accepts as they are. A repeated option takes its last value: these
// give one option a bad value after good ones.
const PAY = ['pay', '--account', 'acc_alice', '--amount', '5', '--currency', 'EUR'];
const CHECKOUT = ['checkout', '--account', 'a', '--amount', '5', '--currency', 'EUR'];
const payWith = (option: string, value: string) => [...PAY, option, value];
const checkoutWith = (option: string, value: string) => [...CHECKOUT, option, value];

describe('bad arguments: one line naming the problem, a usage line, exit 2, nothing sent', () => {
  const pay = ['pay', '--account', 'acc_alice', '--currency', 'EUR'];
  const cases: Array<[string, string[], RegExp, RegExp]> = [
    ['missing --amount', pay, /required option '--amount <n>' not specified/, /^usage: retrysafe payment /],
    [
      '--amount 12.5',
      [...pay, '--amount', '12.5'],
      /'--amount <n>' argument '12\.5' is invalid\. must be a whole number/,
      /^usage: retrysafe payment /,
    ],
    ['--amount abc', [...pay, '--amount', 'abc'], /'--amount <n>' argument 'abc' is invalid/, /^usage: retrysafe payment /],
    [
      'an unknown option',
      [...pay, '--amount', '5', '--colour', 'blue'],
      /unknown option '--colour'/,
      /^usage: retrysafe payment /,
    ],
    [
      'a bad currency',
      ['pay', '--account', 'a', '--amount', '5', '--currency', 'EURO'],
      /option '--currency' is invalid: must be an ISO 4217/,
      /^usage: retrysafe payment /,
    ],
    [
      'an account id too long for the API schema',
      ['pay', '--account', 'x'.repeat(129), '--amount', '5', '--currency', 'EUR'],
      /option '--account' is invalid: .*128/,
      /^usage: retrysafe payment /,
    ],
    [
      'a malformed item',
      checkoutWith('--item', 'sku_book:many'),
      /'--item <sku:quantity>' argument 'sku_book:many' is invalid\. must be a whole number/,
      /^usage: retrysafe checkout /,
    ],
    [
      'a transfer with an amount that is no number',
      ['transfer', '--from', 'acc_alice', '--to', 'acc_bob', '--currency', 'eur', '--amount', 'x'],
      /'--amount <n>' argument 'x' is invalid/,
      /^usage: retrysafe transfer /,
    ],
    [
      'an unknown list status',
      ['list', '--status', 'done'],
      /argument 'done' is invalid\. Allowed choices are processing, succeeded, failed/,
      /^usage: retrysafe list /,
    ],
  ];

  it.concurrent.each(cases)('%s', async (_name, args, problem, usageLine) => {
    const before = counter.received();
    const run = await runCli(args, { RETRYSAFE_API_URL: counter.url() });
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toBe('');
    const lines = run.stderr
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('(Did you mean'));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^error: /);
    expect(lines[0]).toMatch(problem);
    expect(lines[1]).toMatch(usageLine);
    expect(lines[1]).toContain('--help');
    expect(counter.received() - before).toBe(0);
  });

  it('an unknown command: the API is asked once for the operations it has (it may add its own), then it is refused', async () => {
    const before = counter.received();
    const run = await runCli(['refund', '--amount', '5'], { RETRYSAFE_API_URL: counter.url() });
    expect(run.exitCode).toBe(2);
    const lines = run.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/unknown command 'refund'/);
    expect(lines.at(-1)).toMatch(/^usage: retrysafe </);
    // GET /openapi.json, answered 500 by the stand-in: nothing else.
    expect(counter.received() - before).toBe(1);
  });

  it.each([
    [
      '--amount 0',
      ['pay', '--account', 'a', '--currency', 'EUR', '--amount', '0'],
      /option '--amount' is invalid: must be a whole number from 1 to 1000000000000/,
      'payment',
    ],
    [
      'a currency that is not ISO 4217',
      ['pay', '--account', 'a', '--amount', '5', '--currency', 'XYZ'],
      /option '--currency' is invalid: must be an ISO 4217 currency code/,
      'payment',
    ],
    [
      'a key with a space',
      ['pay', '--account', 'a', '--amount', '5', '--currency', 'EUR', '--key', 'a b'],
      /'--key <key>' argument 'a b' is invalid/,
      'payment',
    ],
    [
      'a checkout without items',
      ['checkout', '--account', 'a', '--amount', '5', '--currency', 'EUR'],
      /required option '--item <sku:quantity>' not specified/,
      'checkout',
    ],
    [
      'too many of one item',
      ['checkout', '--account', 'a', '--amount', '5', '--currency', 'EUR', '--item', 'sku:1001'],
      /option '--item' is invalid: quantity must be a whole number from 1 to 1000/,
      'checkout',
    ],
    [
      'a transfer without --to',
      ['transfer', '--from', 'acc_alice', '--amount', '5', '--currency', 'EUR'],
      /required option '--to <to>' not specified/,
      'transfer',
    ],
    ['a bad --timeout', ['wait', 'k', '--timeout', 'soon'], /'--timeout <duration>' argument 'soon' is invalid/, 'wait'],
    ['status without a key', ['status'], /missing required argument 'key'/, 'status'],
    ['a --limit out of range', ['list', '--limit', '500'], /'--limit <n>' argument '500' is invalid/, 'list'],
    [
      'an --api-url that is not a URL',
      ['status', 'k', '--api-url', 'localhost:3000'],
      /'--api-url <url>' argument 'localhost:3000' is invalid/,
      'status',
    ],
    ['a --type that is no type name', ['list', '--type', 'Refund!'], /'--type <type>' argument 'Refund!' is invalid/, 'list'],
    // Every other option and argument, each with a value it must refuse.
    ['an empty --account', payWith('--account', ''), /option '--account' is invalid: must be 1-128 characters/, 'payment'],
    [
      'an --amount over the API limit',
      payWith('--amount', '1000000000001'),
      /option '--amount' is invalid: must be a whole number from 1 to 1000000000000/,
      'payment',
    ],
    [
      'a --description too long',
      payWith('--description', 'd'.repeat(501)),
      /option '--description' is invalid: must be at most 500 characters/,
      'payment',
    ],
    ['a key too long', payWith('--key', 'k'.repeat(256)), /'--key <key>' argument 'k+' is invalid/, 'payment'],
    ['an empty key', payWith('--key', ''), /'--key <key>' argument '' is invalid/, 'payment'],
    ['an option without its value', ['status', 'k', '--api-key'], /option '--api-key <secret>' argument missing/, 'status'],
    ['an empty --item', checkoutWith('--item', ''), /'--item <sku:quantity>' argument '' is invalid/, 'checkout'],
    ['an item without its quantity', checkoutWith('--item', 'sku_book'), /must be <sku>:<quantity>/, 'checkout'],
    ['an item of quantity 0', checkoutWith('--item', 'sku_book:0'), /quantity must be a whole number from 1 to 1000/, 'checkout'],
    [
      'a sku too long for the API',
      checkoutWith('--item', `${'s'.repeat(129)}:1`),
      /option '--item' is invalid: sku must be 1-128 characters/,
      'checkout',
    ],
    [
      'more items than the API takes',
      [...CHECKOUT, ...Array.from({ length: 101 }, (_, i) => ['--item', `s${i}:1`]).flat()],
      /option '--item' is invalid: must have 1-100 entries/,
      'checkout',
    ],
    ['a --limit that is not a number', ['list', '--limit', 'ten'], /'--limit <n>' argument 'ten' is invalid/, 'list'],
    ['a --limit of 0', ['list', '--limit', '0'], /'--limit <n>' argument '0' is invalid/, 'list'],
    ['a --cursor with a space', ['list', '--cursor', 'a b'], /'--cursor <cursor>' argument 'a b' is invalid/, 'list'],
    ['an empty --cursor', ['list', '--cursor', ''], /'--cursor <cursor>' argument '' is invalid/, 'list'],
    [
      'a --timeout over a day',
      ['wait', 'k', '--timeout', '2d'],
      /'--timeout <duration>' argument '2d' is invalid\. must be at most 1 day/,
      'wait',
    ],
    ['a --timeout of 0', ['status', 'k', '--timeout', '0'], /'--timeout <duration>' argument '0' is invalid/, 'status'],
    [
      'an --api-url that is not http',
      ['list', '--api-url', 'ftp://localhost'],
      /must start with http:\/\/ or https:\/\//,
      'list',
    ],
    ['wait without a key', ['wait'], /missing required argument 'key'/, 'wait'],
    [
      'wait with a key holding a space',
      ['wait', 'a b'],
      /value 'a b' is invalid for argument 'key'\. must be 1-255 visible ASCII/,
      'wait',
    ],
    ['status with an empty key', ['status', ''], /value '' is invalid for argument 'key'/, 'status'],
    ['status with two keys', ['status', 'a', 'b'], /too many arguments for 'status'/, 'status'],
    ['cancel without a key', ['cancel'], /missing required argument 'key'/, 'cancel'],
    ['cancel with a key holding a space', ['cancel', 'a b'], /value 'a b' is invalid for argument 'key'/, 'cancel'],
    ['cancel with a key too long', ['cancel', 'k'.repeat(256)], /value 'k+' is invalid for argument 'key'/, 'cancel'],
    ['cancel with two keys', ['cancel', 'a', 'b'], /too many arguments for 'cancel'/, 'cancel'],
    [
      'cancel with a bad --timeout',
      ['cancel', 'k', '--timeout', 'later'],
      /'--timeout <duration>' argument 'later' is invalid/,
      'cancel',
    ],
    ['cancel with an unknown option', ['cancel', 'k', '--force'], /unknown option '--force'/, 'cancel'],
    ['webhooks without a subcommand it knows', ['webhooks', 'serve'], /unknown command 'serve'/, 'webhooks'],
    [
      'a --port that is not a number',
      ['webhooks', 'listen', '--port', 'http'],
      /'--port <n>' argument 'http' is invalid/,
      'webhooks listen',
    ],
    [
      'a --port past 65535',
      ['webhooks', 'listen', '--port', '65536'],
      /'--port <n>' argument '65536' is invalid/,
      'webhooks listen',
    ],
    ['a negative --port', ['webhooks', 'listen', '--port', '-1'], /'--port <n>' argument '-1' is invalid/, 'webhooks listen'],
    [
      'a --secret without the whsec_ prefix',
      ['webhooks', 'listen', '--secret', 'c2VjcmV0'],
      /option '--secret <whsec_key>' is invalid: must be whsec_ followed by the base64 of at least 24 bytes/,
      'webhooks listen',
    ],
    [
      'a --secret too short',
      ['webhooks', 'listen', '--secret', `whsec_${Buffer.alloc(16).toString('base64')}`],
      /option '--secret <whsec_key>' is invalid/,
      'webhooks listen',
    ],
    [
      'a --secret that is not base64',
      ['webhooks', 'listen', '--secret', `whsec_${'!'.repeat(40)}`],
      /option '--secret <whsec_key>' is invalid/,
      'webhooks listen',
    ],
    ['an unknown option of listen', ['webhooks', 'listen', '--verbose'], /unknown option '--verbose'/, 'webhooks listen'],
  ])('(in process) %s', async (_name, args, problem, command) => {
    const run = await runHere(args);
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(problem);
    expect(lines[1]).toMatch(new RegExp(`^usage: retrysafe ${command} .*--help\\)$`));
  });

  it('a malformed signing secret is named but never repeated, from the option or from RETRYSAFE_TENANT_WEBHOOK_SECRET', async () => {
    const secret = `whsec_${'A'.repeat(20)}`;
    const fromOption = await runHere(['webhooks', 'listen', '--secret', secret]);
    vi.stubEnv('RETRYSAFE_TENANT_WEBHOOK_SECRET', secret);
    const fromEnv = await runHere(['webhooks', 'listen']).finally(() => vi.unstubAllEnvs());
    for (const run of [fromOption, fromEnv]) {
      expect(run.exitCode).toBe(2);
      expect(run.stderr).toMatch(/^error: option '--secret <whsec_key>' is invalid: must be whsec_/);
      expect(run.stderr).not.toContain('A'.repeat(20));
    }
  });

  it('no command at all prints the help on stderr and exits 2', async () => {
    const run = await runCli([]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('Usage: retrysafe');
  });
});
