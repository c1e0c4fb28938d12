// The CLI as a process, with no stack: help, bad arguments (one line + a usage hint,
// exit 2, nothing sent), and an API that is not there (exit 4 with the key to retry with).
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Command } from 'commander';
import { buildProgram, runCli as runInProcess } from '../../client/cli/program.js';
import { freePort } from '../../common/supervisor/ports.js';
import { runCli, spawnCli } from '../client/helpers.js';

/** What `<command> --help` prints, the text added after the options included. */
function helpOf(command: Command | undefined): string {
  let text = '';
  command?.configureOutput({ writeOut: (s) => (text += s) });
  command?.outputHelp();
  return text;
}

/** Runs the CLI in this process, capturing what it writes (for the many cheap cases). */
async function runHere(args: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  try {
    const exitCode = await runInProcess(args);
    return { exitCode, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

// A stand-in API that only counts: a usage error must not reach it.
let counter: Server;
let counterUrl: string;
let received = 0;

beforeAll(async () => {
  counter = createServer((_req, res) => {
    received++;
    res.writeHead(500).end();
  });
  counter.listen(0, '127.0.0.1');
  await once(counter, 'listening');
  counterUrl = `http://127.0.0.1:${(counter.address() as { port: number }).port}`;
});

afterAll(async () => {
  await new Promise((r) => counter.close(r));
});

describe('help', () => {
  const expected: Record<string, string[]> = {
    pay: [
      '--account <id>',
      '--amount <minor>',
      '--currency <code>',
      '--key <key>',
      '--json',
      '--api-url <url>',
      '--api-key <secret>',
      '--timeout <duration>',
    ],
    checkout: ['--item <sku[:quantity]>', '--key <key>', '--json'],
    status: ['<key>', '--json'],
    wait: ['<key>', '--timeout <duration>'],
    list: ['--status <status>', '--type <type>', '--limit <n>'],
    demo: ['--bank-url <url>', '--reservations-url <url>', 'npm start -- --faults'],
  };

  it('--help lists every command; `pay --help` its options and the exit codes (as processes)', async () => {
    const top = await runCli(['--help']);
    expect(top.exitCode).toBe(0);
    for (const cmd of Object.keys(expected)) expect(top.stdout).toContain(`  ${cmd}`);
    const pay = await runCli(['pay', '--help']);
    expect(pay.exitCode).toBe(0);
    for (const w of expected.pay ?? []) expect(pay.stdout).toContain(w);
    expect(pay.stdout).toContain('3  still processing at the deadline');
  });

  it('every command has --help, naming its options', () => {
    const program = buildProgram(() => undefined);
    expect(program.commands.map((c) => c.name()).sort()).toEqual(Object.keys(expected).sort());
    for (const [cmd, words] of Object.entries(expected)) {
      const command = program.commands.find((c) => c.name() === cmd);
      const help = helpOf(command);
      expect(help, cmd).toContain(`Usage: retrysafe ${cmd}`);
      expect(help, cmd).toContain('-h, --help');
      for (const w of words) expect(helpOf(command), `${cmd} --help mentions ${w}`).toContain(w);
    }
  });
});

describe('bad arguments: one line naming the problem, a usage line, exit 2, nothing sent', () => {
  const pay = ['pay', '--account', 'acc_alice', '--currency', 'EUR'];
  const cases: Array<[string, string[], RegExp, RegExp]> = [
    ['missing --amount', pay, /required option '--amount <minor>' not specified/, /^usage: retrysafe pay /],
    [
      '--amount 12.5',
      [...pay, '--amount', '12.5'],
      /'--amount <minor>' argument '12\.5' is invalid\. must be a whole number of minor units/,
      /^usage: retrysafe pay /,
    ],
    ['--amount abc', [...pay, '--amount', 'abc'], /'--amount <minor>' argument 'abc' is invalid/, /^usage: retrysafe pay /],
    ['an unknown option', [...pay, '--amount', '5', '--colour', 'blue'], /unknown option '--colour'/, /^usage: retrysafe pay /],
    [
      'a bad currency',
      ['pay', '--account', 'a', '--amount', '5', '--currency', 'EURO'],
      /'--currency <code>' argument 'EURO' is invalid\. must be an ISO 4217/,
      /^usage: retrysafe pay /,
    ],
    ['an unknown command', ['refund', '--amount', '5'], /unknown command 'refund'/, /^usage: retrysafe </],
    [
      'an account id too long for the API schema',
      ['pay', '--account', 'x'.repeat(129), '--amount', '5', '--currency', 'EUR'],
      /option '--account' is invalid: .*128/,
      /^usage: retrysafe pay /,
    ],
    [
      'a malformed item',
      ['checkout', '--account', 'a', '--amount', '5', '--currency', 'EUR', '--item', 'sku_book:many'],
      /'--item <sku\[:quantity\]>' argument 'sku_book:many' is invalid/,
      /^usage: retrysafe checkout /,
    ],
    [
      'an unknown list status',
      ['list', '--status', 'done'],
      /argument 'done' is invalid\. Allowed choices are processing, succeeded, failed/,
      /^usage: retrysafe list /,
    ],
  ];

  it.concurrent.each(cases)('%s', async (_name, args, problem, usageLine) => {
    const before = received;
    const run = await runCli(args, { RETRYSAFE_API_URL: counterUrl });
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
    expect(received - before).toBe(0);
  });

  it.each([
    [
      '--amount 0',
      ['pay', '--account', 'a', '--currency', 'EUR', '--amount', '0'],
      /'--amount <minor>' argument '0' is invalid\. must be at least 1/,
      'pay',
    ],
    [
      'a currency that is not ISO 4217',
      ['pay', '--account', 'a', '--amount', '5', '--currency', 'XYZ'],
      /'--currency <code>' argument 'XYZ' is invalid/,
      'pay',
    ],
    [
      'a key with a space',
      ['pay', '--account', 'a', '--amount', '5', '--currency', 'EUR', '--key', 'a b'],
      /'--key <key>' argument 'a b' is invalid/,
      'pay',
    ],
    [
      'a checkout without items',
      ['checkout', '--account', 'a', '--amount', '5', '--currency', 'EUR'],
      /required option '--item <sku\[:quantity\]>' not specified/,
      'checkout',
    ],
    [
      'too many of one item',
      ['checkout', '--account', 'a', '--amount', '5', '--currency', 'EUR', '--item', 'sku:1001'],
      /quantity must be between 1 and 1000/,
      'checkout',
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
    ['an unknown --type', ['list', '--type', 'refund'], /Allowed choices are payment, checkout/, 'list'],
  ])('(in process) %s', async (_name, args, problem, command) => {
    const run = await runHere(args);
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(problem);
    expect(lines[1]).toMatch(new RegExp(`^usage: retrysafe ${command} .*--help\\)$`));
  });

  it('no command at all prints the help on stderr and exits 2', async () => {
    const run = await runCli([]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('Usage: retrysafe');
  });
});

describe('when the API is not there', () => {
  it('pay gives up at the deadline with exit 4, saying the outcome is unknown and how to retry with the same key', async () => {
    const port = await freePort();
    const run = await runCli([
      'pay',
      '--account',
      'acc_alice',
      '--amount',
      '1250',
      '--currency',
      'EUR',
      '--key',
      'offline-1',
      '--timeout',
      '1500ms',
      '--api-url',
      `http://127.0.0.1:${port}`,
    ]);
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
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    try {
      const url = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
      const child = spawnCli([
        'pay',
        '--account',
        'acc_alice',
        '--amount',
        '1250',
        '--currency',
        'EUR',
        '--key',
        'ctrl-c-1',
        '--api-url',
        url,
      ]);
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
