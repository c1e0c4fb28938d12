// The `retrysafe` command line, parsed by commander. A bad argument is one line naming the
// problem and one usage line on stderr, exit 2, before anything is sent.
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { Command, CommanderError, Option } from 'commander';
import { DEFAULT_BASE_URL } from '../lib/constants.js';
import { BUILT_IN_OPERATIONS, type OperationDescription } from '../lib/discovery.js';
import {
  parseCursor,
  parseDuration,
  parseHttpUrl,
  parseKey,
  parseDefinitionVersion,
  parseLimit,
  parseOperationType,
  parsePort,
  webhookSecretProblem,
} from './args.js';
import type { ConnectionOpts } from './commands.js';
import { EXIT } from './exit-codes.js';
import { operationCommand, usageLine } from './type-commands.js';

// By the package's own name, so the same line reads the version from the source in a
// checkout and from the compiled files of an installed package.
const VERSION = (createRequire(import.meta.url)('retrysafe/package.json') as { version: string }).version;
const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_WEBHOOK_PORT = 3100;

// The client, the renderers and the webhook receiver load only once a command runs:
// `--help` and usage errors answer without them.
const loadCommands = () => import('./commands.js');

/** `retrysafe webhooks listen` for the listen command: the words that name it. */
function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** The second line of every usage error: the command's synopsis and where to read more. */
function usage(cmd: Command, synopsis: string): Command {
  return cmd.showHelpAfterError(`usage: ${synopsis}  (more: ${commandPath(cmd)} --help)`);
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

const CANCEL_EXIT_CODES_HELP = `
The operation stops at its next step boundary: a step in flight finishes (or reaches its
deadline), no new step starts, every compensation runs, and it ends failed (cancelled).

Exit codes:
  0  cancel requested (or the operation had already ended cancelled)
  2  usage error
  4  other error (API unreachable, unauthorized, no operation with this key, ...)
  5  too late: the operation had already ended otherwise (its outcome is printed)`;

const START_HELP = `
Every call carries an idempotency key (--key, or a new UUID). Retries of network errors,
timeouts, 429 and 502/503/504 reuse it, so a retry can never charge twice; to repeat a
call yourself, pass the same --key.`;

const LISTEN_HELP = `
Each event is answered 204 when its Standard Webhooks signature holds, 400 when it does
not (wrong secret, altered body, timestamp more than 5 minutes away); the sender retries
what was not answered 2xx, and a redelivery (same webhook-id) is marked as such. Events
are signed with your tenant's own secrets, so another tenant's secret verifies nothing.

Exit codes:
  0  stopped with Ctrl-C     2  usage error     4  the port is taken (or cannot be used)`;

/**
 * The whole command line. `operations` are the operation types it has a command for: the
 * built-in ones, and those an API adds (found in its /openapi.json by runCli).
 */
export function buildProgram(
  setExit: (code: number) => void,
  operations: ReadonlyMap<string, OperationDescription> = new Map(Object.entries(BUILT_IN_OPERATIONS)),
  /** The first word of the command line: an alias (`pay`) stays the word a retry line repeats. */
  invokedAs?: string,
): Command {
  const program = new Command('retrysafe')
    .description(
      'Safe retries for payments, checkouts, transfers and any operation an API defines: the retrysafe API from the command line.',
    )
    .version(VERSION)
    .exitOverride()
    .showSuggestionAfterError()
    .configureOutput({ writeOut: (s) => process.stdout.write(s), writeErr: (s) => process.stderr.write(s) })
    .addHelpText('after', EXIT_CODES_HELP);
  const names = [...operations.entries()].map(([type, d]) => [...d.aliases, type].join('|'));
  usage(program, `retrysafe <${[...names, 'status', 'wait', 'list', 'cancel', 'webhooks'].join('|')}> [options]`);
  addStartCommands(program, operations, setExit, invokedAs);
  addKeyCommand(program, setExit, 'status', 'Show an operation as it is now (exit code follows its status)', {
    exitCodes: EXIT_CODES_HELP,
    synopsis: '[--json]',
  });
  addKeyCommand(program, setExit, 'wait', 'Wait for an operation to finish (resumes a pay or checkout that timed out)', {
    exitCodes: EXIT_CODES_HELP,
    synopsis: '[--timeout 30s] [--json]',
    timeout: 'stop waiting after this long (exit 3)',
  });
  addListCommand(program, [...operations.keys()], setExit);
  addKeyCommand(program, setExit, 'cancel', 'Cancel an operation: it stops at its next step boundary and undoes what it did', {
    exitCodes: CANCEL_EXIT_CODES_HELP,
    synopsis: '[--json]',
  });
  addWebhooksCommand(program, setExit);
  return program;
}

/** One command per operation type (and its aliases): start one, or replay it with the same --key. */
function addStartCommands(
  program: Command,
  operations: ReadonlyMap<string, OperationDescription>,
  setExit: (code: number) => void,
  invokedAs: string | undefined,
): void {
  for (const [type, description] of operations) {
    const command = operationCommand(type, description, async (body, args, o) => {
      const opts = o as unknown as ConnectionOpts & { key?: string };
      const name = invokedAs !== undefined && [type, ...description.aliases].includes(invokedAs) ? invokedAs : type;
      setExit(
        await (
          await loadCommands()
        ).startOperation(type, body, { ...opts, key: opts.key ?? randomUUID() }, { command: name, args }),
      );
    });
    // Made apart from the program, so it takes the program's settings (exit override, output) explicitly.
    command.copyInheritedSettings(program);
    command.option('--key <key>', 'idempotency key (default: a new UUID); reuse it to retry safely', parseKey);
    program.addCommand(withConnection(command, { timeout: `stop waiting after this long (the ${type} goes on; exit 3)` }));
    command.addHelpText('after', START_HELP + EXIT_CODES_HELP);
    usage(command, usageLine(type, description));
  }
}

/** A command on one operation's key (status, wait, cancel): the same argument, options and action. */
function addKeyCommand(
  program: Command,
  setExit: (code: number) => void,
  name: 'status' | 'wait' | 'cancel',
  description: string,
  o: { exitCodes: string; synopsis: string; timeout?: string },
): void {
  const command = withConnection(
    program.command(name).description(description).argument('<key>', 'the idempotency key', parseKey),
    { timeout: o.timeout },
  )
    .addHelpText('after', o.exitCodes)
    .action(async (key: string, c: ConnectionOpts) => setExit(await (await loadCommands())[name](key, c)));
  usage(command, `retrysafe ${name} <key> ${o.synopsis}`);
}

interface ListOptions extends ConnectionOpts {
  status?: 'processing' | 'succeeded' | 'failed';
  type?: string;
  definition?: string;
  limit: number;
  cursor?: string;
}

function addListCommand(program: Command, types: readonly string[], setExit: (code: number) => void): void {
  const list = withConnection(
    program
      .command('list')
      .description('List your operations, newest first')
      .addOption(new Option('--status <status>', 'only these').choices(['processing', 'succeeded', 'failed']))
      .addOption(new Option('--type <type>', `only these (${types.join(', ')}, ...)`).argParser(parseOperationType))
      .option('--definition <version>', 'only those started on this definition version', parseDefinitionVersion)
      .option('--limit <n>', 'page size, 1-100', parseLimit, 20)
      .option('--cursor <cursor>', 'the next page, as printed after the previous one', parseCursor),
  )
    .addHelpText('after', EXIT_CODES_HELP)
    .action(async (o: ListOptions) =>
      setExit(
        await (
          await loadCommands()
        ).list({ status: o.status, type: o.type, version: o.definition, limit: o.limit, cursor: o.cursor }, o),
      ),
    );
  usage(
    list,
    `retrysafe list [--status processing|succeeded|failed] [--type ${types.join('|')}] [--definition <version>] [--limit n] [--json]`,
  );
}

/** `retrysafe webhooks listen`: a receiver of completion webhooks on this machine. */
function addWebhooksCommand(program: Command, setExit: (code: number) => void): void {
  const webhooks = program
    .command('webhooks')
    .description('Completion webhooks: receive them on this machine')
    .addHelpText('after', '\nSee: retrysafe webhooks listen --help');
  usage(webhooks, 'retrysafe webhooks listen [--port <n>] [--secret <whsec_key>]');
  const listen = webhooks
    .command('listen')
    .description('Receive completion webhooks, check each signature, print each event as it arrives')
    .addOption(
      new Option('--port <n>', 'port on 127.0.0.1 (0: any free port)').default(DEFAULT_WEBHOOK_PORT).argParser(parsePort),
    )
    .addOption(
      new Option(
        '--secret <whsec_key>',
        "your tenant's signing secret (one of them while it rotates); without it signatures are not checked",
      ).env('RETRYSAFE_TENANT_WEBHOOK_SECRET'),
    )
    .option('--json', 'one JSON line per event (for scripts) instead of one line of text')
    .addHelpText('after', LISTEN_HELP)
    .action(async (o: { port: number; secret?: string; json?: boolean }) => {
      const secret = o.secret?.trim();
      if (secret !== undefined) {
        const problem = webhookSecretProblem(secret);
        if (problem !== undefined) usageError(listen, `'--secret <whsec_key>' is invalid: ${problem}`);
      }
      setExit(await (await import('./webhooks.js')).listen({ port: o.port, secret, json: o.json }));
    });
  usage(listen, 'retrysafe webhooks listen [--port <n>] [--secret <whsec_key>] [--json]');
}

/** A field the API would refuse: reported like any other bad argument. */
function usageError(cmd: Command, problem: string | undefined): void {
  if (problem !== undefined) cmd.error(`error: option ${problem}`, { exitCode: EXIT.usage, code: 'retrysafe.usage' });
}

/** Parses and runs one command line; resolves to the exit code. */
export async function runCli(argv: string[]): Promise<number> {
  let code: number = EXIT.ok;
  const setExit = (c: number) => {
    code = c;
  };
  const operations = await withApiOperations(argv);
  const program = buildProgram(setExit, operations, argv[0]);
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

const OTHER_COMMANDS = new Set(['status', 'wait', 'list', 'cancel', 'webhooks', 'help']);

/**
 * The built-in operations, and, when the first word names none of the CLI's commands, the
 * operations the API describes in its /openapi.json: a deployment may add its own types.
 * Nothing is asked of the API otherwise, so `--help` and every built-in command work offline.
 */
async function withApiOperations(argv: readonly string[]): Promise<Map<string, OperationDescription>> {
  const operations = new Map(Object.entries(BUILT_IN_OPERATIONS));
  const word = argv[0];
  const known = [...operations.entries()].some(([t, d]) => t === word || d.aliases.includes(word ?? ''));
  if (word === undefined || word.startsWith('-') || known || OTHER_COMMANDS.has(word)) return operations;
  const flag = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
  };
  try {
    const baseUrl = parseHttpUrl(flag('--api-url') ?? process.env.RETRYSAFE_API_URL ?? DEFAULT_BASE_URL);
    const apiKey = flag('--api-key') ?? process.env.RETRYSAFE_API_KEY;
    const { createClient } = await import('../lib/client.js');
    const described = await createClient({ baseUrl, apiKey, timeoutMs: 5_000 }).describeApi();
    for (const [type, description] of described) if (!operations.has(type)) operations.set(type, description);
  } catch {
    // Unreachable or not a retrysafe API: the word is then an unknown command, said as usual.
  }
  return operations;
}
