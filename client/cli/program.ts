// The `retrysafe` command line, parsed by commander. A bad argument is one line naming the
// problem and one usage line on stderr, exit 2, before anything is sent.
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { Command, CommanderError, Option } from 'commander';
import { DEFAULT_BASE_URL } from '../lib/constants.js';
import { collectItem, parseAmount, parseCurrency, parseDuration, parseHttpUrl, parseKey, parseLimit, type Item } from './args.js';
import type { ConnectionOpts } from './commands.js';
import type { DemoOpts } from './demo.js';
import { EXIT } from './exit-codes.js';

const VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
const DEFAULT_TIMEOUT_MS = 30_000;

// The client, its schemas and the renderers load only once a command runs: `--help` and
// usage errors answer without them.
const loadCommands = () => import('./commands.js');

/** The second line of every usage error: the command's synopsis and where to read more. */
function usage(cmd: Command, synopsis: string): Command {
  return cmd.showHelpAfterError(`usage: ${synopsis}  (more: ${cmd.parent ? `retrysafe ${cmd.name()}` : 'retrysafe'} --help)`);
}

function withConnection(cmd: Command, opts: { timeout?: string } = {}): Command {
  cmd
    .addOption(
      new Option('--api-url <url>', 'the retrysafe API')
        .env('RETRYSAFE_API_URL')
        .default(DEFAULT_BASE_URL)
        .argParser(parseHttpUrl),
    )
    .addOption(new Option('--api-key <secret>', 'API key, sent as "Authorization: Bearer <secret>"').env('RETRYSAFE_API_KEY'));
  cmd.addOption(
    new Option('--timeout <duration>', opts.timeout ?? 'give up after this long (e.g. 10s, 2m)')
      .default(DEFAULT_TIMEOUT_MS, '30s')
      .argParser(parseDuration),
  );
  return cmd.option('--json', "print the API's JSON (for scripts) instead of tables");
}

const EXIT_CODES_HELP = `
Exit codes:
  0  succeeded           1  failed (business error: insufficient_funds, out_of_stock, ...)
  2  usage error         3  still processing at the deadline: retrysafe wait <key>
  4  other error (API unreachable, unauthorized, key reused with another request, ...)`;

const START_HELP = `
Every call carries an idempotency key (--key, or a new UUID). Retries of network errors,
timeouts, 429 and 502/503/504 reuse it, so a retry can never charge twice; to repeat a
call yourself, pass the same --key.`;

export function buildProgram(setExit: (code: number) => void): Command {
  const program = new Command('retrysafe')
    .description('Safe retries for payments and checkouts: the retrysafe API from the command line.')
    .version(VERSION)
    .exitOverride()
    .showSuggestionAfterError()
    .configureOutput({ writeOut: (s) => process.stdout.write(s), writeErr: (s) => process.stderr.write(s) })
    .addHelpText('after', EXIT_CODES_HELP);
  usage(program, 'retrysafe <pay|checkout|status|wait|list|demo> [options]');

  const pay = withConnection(
    program
      .command('pay')
      .description('Make a payment (one charge) and wait for its outcome')
      .requiredOption('--account <id>', 'account to charge, e.g. acc_alice')
      .requiredOption('--amount <minor>', 'amount in minor units: 1250 is 12.50', parseAmount)
      .requiredOption('--currency <code>', 'ISO 4217 currency code, e.g. EUR', parseCurrency)
      .option('--description <text>', 'free text kept with the operation')
      .option('--key <key>', 'idempotency key (default: a new UUID); reuse it to retry safely', parseKey),
    { timeout: 'stop waiting after this long (the payment goes on; exit 3)' },
  )
    .addHelpText('after', START_HELP + EXIT_CODES_HELP)
    .action(
      async (o: ConnectionOpts & { account: string; amount: number; currency: string; description?: string; key?: string }) => {
        const body = {
          account: o.account,
          amount: o.amount,
          currency: o.currency,
          ...(o.description !== undefined ? { description: o.description } : {}),
        };
        const commands = await loadCommands();
        usageError(pay, commands.paymentProblem(body));
        setExit(await commands.pay(body, { ...o, key: o.key ?? randomUUID() }));
      },
    );
  usage(pay, 'retrysafe pay --account <id> --amount <minor> --currency <code> [--key <key>] [--json]');

  const checkout = withConnection(
    program
      .command('checkout')
      .description('Check out items: reserve them, charge, confirm; undone in reverse if a step fails')
      .requiredOption('--account <id>', 'account to charge, e.g. acc_alice')
      .requiredOption('--amount <minor>', 'amount in minor units: 4200 is 42.00', parseAmount)
      .requiredOption('--currency <code>', 'ISO 4217 currency code, e.g. EUR', parseCurrency)
      .requiredOption('--item <sku[:quantity]>', 'an item to reserve, e.g. sku_book:2 (repeat for more)', collectItem)
      .option('--description <text>', 'free text kept with the operation')
      .option('--key <key>', 'idempotency key (default: a new UUID); reuse it to retry safely', parseKey),
    { timeout: 'stop waiting after this long (the checkout goes on; exit 3)' },
  )
    .addHelpText('after', START_HELP + EXIT_CODES_HELP)
    .action(
      async (
        o: ConnectionOpts & {
          account: string;
          amount: number;
          currency: string;
          item: Item[];
          description?: string;
          key?: string;
        },
      ) => {
        const body = {
          account: o.account,
          amount: o.amount,
          currency: o.currency,
          ...(o.description !== undefined ? { description: o.description } : {}),
          items: o.item,
        };
        const commands = await loadCommands();
        usageError(checkout, commands.checkoutProblem(body));
        setExit(await commands.checkout(body, { ...o, key: o.key ?? randomUUID() }));
      },
    );
  usage(
    checkout,
    'retrysafe checkout --account <id> --amount <minor> --currency <code> --item <sku:qty>... [--key <key>] [--json]',
  );

  const status = withConnection(
    program
      .command('status')
      .description('Show an operation as it is now (exit code follows its status)')
      .argument('<key>', 'the idempotency key'),
  )
    .addHelpText('after', EXIT_CODES_HELP)
    .action(async (key: string, o: ConnectionOpts) => setExit(await (await loadCommands()).status(key, o)));
  usage(status, 'retrysafe status <key> [--json]');

  const wait = withConnection(
    program
      .command('wait')
      .description('Wait for an operation to finish (resumes a pay or checkout that timed out)')
      .argument('<key>', 'the idempotency key'),
    { timeout: 'stop waiting after this long (exit 3)' },
  )
    .addHelpText('after', EXIT_CODES_HELP)
    .action(async (key: string, o: ConnectionOpts) => setExit(await (await loadCommands()).wait(key, o)));
  usage(wait, 'retrysafe wait <key> [--timeout 30s] [--json]');

  const list = withConnection(
    program
      .command('list')
      .description('List your operations, newest first')
      .addOption(new Option('--status <status>', 'only these').choices(['processing', 'succeeded', 'failed']))
      .addOption(new Option('--type <type>', 'only these').choices(['payment', 'checkout']))
      .option('--limit <n>', 'page size, 1-100', parseLimit, 20)
      .option('--cursor <cursor>', 'the next page, as printed after the previous one'),
  )
    .addHelpText('after', EXIT_CODES_HELP)
    .action(
      async (
        o: ConnectionOpts & {
          status?: 'processing' | 'succeeded' | 'failed';
          type?: 'payment' | 'checkout';
          limit: number;
          cursor?: string;
        },
      ) => setExit(await (await loadCommands()).list({ status: o.status, type: o.type, limit: o.limit, cursor: o.cursor }, o)),
    );
  usage(list, 'retrysafe list [--status processing|succeeded|failed] [--type payment|checkout] [--limit n] [--json]');

  const demo = program
    .command('demo')
    .description('A narrated run against the local stack (npm start -- --faults): a lost response retried safely')
    .addOption(
      new Option('--api-url <url>', 'the retrysafe API')
        .env('RETRYSAFE_API_URL')
        .default(DEFAULT_BASE_URL)
        .argParser(parseHttpUrl),
    )
    .addOption(new Option('--api-key <secret>', 'API key, sent as "Authorization: Bearer <secret>"').env('RETRYSAFE_API_KEY'))
    .addOption(new Option('--bank-url <url>', 'the sandbox bank').default('http://localhost:4001').argParser(parseHttpUrl))
    .addOption(
      new Option('--reservations-url <url>', 'the sandbox reservation service')
        .default('http://localhost:4002')
        .argParser(parseHttpUrl),
    )
    .addOption(
      new Option('--timeout <duration>', 'deadline of each operation in the demo')
        .default(60_000, '60s')
        .argParser(parseDuration),
    )
    .addHelpText(
      'after',
      `
Start the stack with fault injection in another terminal first:
  npm start -- --faults
The demo turns the bank's faults on for its own steps and off again at the end.`,
    )
    .action(async (o: DemoOpts) => setExit(await (await import('./demo.js')).runDemo(o)));
  usage(demo, 'retrysafe demo [--api-url <url>] [--bank-url <url>] [--reservations-url <url>]');

  return program;
}

/** A problem the API's schema found in the body: reported like any other bad argument. */
function usageError(cmd: Command, problem: string | undefined): void {
  if (problem !== undefined) cmd.error(`error: option ${problem}`, { exitCode: EXIT.usage, code: 'retrysafe.usage' });
}

/** Parses and runs one command line; resolves to the exit code. */
export async function runCli(argv: string[]): Promise<number> {
  let code: number = EXIT.ok;
  const program = buildProgram((c) => {
    code = c;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.code === 'commander.helpDisplayed' || error.code === 'commander.version' ? EXIT.ok : EXIT.usage;
    }
    throw error;
  }
}
