// The command line of `npm run demo`, parsed by commander with the CLI's own argument
// parsers and exit codes: a bad argument is one line naming the problem and one usage
// line on stderr, exit 2, before anything is touched. The demo is repository tooling (it
// drives the sandboxes' fault injection), so the published `retrysafe` CLI does not ship it.
import { Command, CommanderError, Option } from 'commander';
import { parseDuration, parseHttpUrl } from '../../client/cli/args.js';
import { EXIT } from '../../client/cli/exit-codes.js';
import { DEFAULT_BASE_URL } from '../../client/lib/index.js';
import type { DemoOpts } from './run.js';

const NAME = 'npm run demo --';
const SYNOPSIS = `${NAME} [--api-url <url>] [--bank-url <url>] [--reservations-url <url>]`;

function buildDemoProgram(setExit: (code: number) => void): Command {
  return new Command(NAME)
    .description('A narrated run against the local stack (npm start -- --faults): a lost response retried safely')
    .exitOverride()
    .configureOutput({ writeOut: (s) => process.stdout.write(s), writeErr: (s) => process.stderr.write(s) })
    .showHelpAfterError(`usage: ${SYNOPSIS}  (more: ${NAME} --help)`)
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
    .action(async (o: DemoOpts) => setExit(await (await import('./run.js')).runDemo(o)));
}

/** Parses the command line and runs the demo; resolves to the exit code. */
export async function runDemoCli(argv: string[]): Promise<number> {
  let code: number = EXIT.ok;
  try {
    await buildDemoProgram((c) => (code = c)).parseAsync(argv, { from: 'user' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) return error.code === 'commander.helpDisplayed' ? EXIT.ok : EXIT.usage;
    throw error;
  }
}
