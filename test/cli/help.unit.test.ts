// `retrysafe --help` and every command's help, as a process and in process: each command
// is listed, and its help names its options (the request's fields for an operation's
// command, made from its schema: client/cli/type-commands.ts) and its exit codes. The
// sandbox demo is repository tooling (npm run demo), not a command of the published CLI.
import { describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import { buildProgram } from '../../client/cli/program.js';
import { runCli } from '../client/helpers.js';

/** What `<command> --help` prints, the text added after the options included. */
function helpOf(command: Command | undefined): string {
  let text = '';
  command?.configureOutput({ writeOut: (s) => (text += s) });
  command?.outputHelp();
  return text;
}

describe('help', () => {
  /** Words each command's help names, by the command's path (`webhooks listen` is listen under webhooks). */
  const expected: Record<string, string[]> = {
    payment: [
      '--account <account>',
      '--amount <n>',
      '--currency <code>',
      '--key <key>',
      '--json',
      '--api-url <url>',
      '--api-key <secret>',
      '--timeout <duration>',
    ],
    checkout: ['--item <sku:quantity>', '--key <key>', '--json'],
    transfer: ['--from <from>', '--to <to>', '--amount <n>', '--currency <code>', '--key <key>', '--json'],
    status: ['<key>', '--json'],
    wait: ['<key>', '--timeout <duration>'],
    list: ['--status <status>', '--type <type>', '--limit <n>', '--cursor <cursor>'],
    cancel: ['<key>', '--json', '--api-url <url>', 'next step boundary', '5  too late'],
    webhooks: ['listen'],
    // The answers a webhook gets and the exit code of a port in use, beside its options.
    'webhooks listen': [
      '--port <n>',
      '--secret <whsec_key>',
      'RETRYSAFE_TENANT_WEBHOOK_SECRET',
      '--json',
      '204',
      '400',
      '4  the port is taken',
    ],
  };
  const topLevel = Object.keys(expected).filter((path) => !path.includes(' '));

  it('--help lists every command; `pay --help` its options and the exit codes (as processes)', async () => {
    const top = await runCli(['--help']);
    expect(top.exitCode).toBe(0);
    for (const cmd of topLevel) expect(top.stdout).toContain(`  ${cmd}`);
    expect(top.stdout).not.toMatch(/^\s+demo\b/m);
    const pay = await runCli(['pay', '--help']);
    expect(pay.exitCode).toBe(0);
    for (const w of expected.payment ?? []) expect(pay.stdout).toContain(w);
    expect(pay.stdout).toContain('Usage: retrysafe payment|pay');
    expect(pay.stdout).toContain('3  still processing at the deadline');
  });

  it('every command has --help, naming its options', () => {
    const program = buildProgram(() => undefined);
    expect(program.commands.map((c) => c.name()).sort()).toEqual([...topLevel].sort());
    for (const [path, words] of Object.entries(expected)) {
      const command = path
        .split(' ')
        .reduce<Command | undefined>((parent, name) => parent?.commands.find((c) => c.name() === name), program);
      const help = helpOf(command);
      expect(help, path).toMatch(new RegExp(`Usage: retrysafe ${path}\\b`));
      expect(help, path).toContain('-h, --help');
      for (const w of words) expect(help, `${path} --help mentions ${w}`).toContain(w);
    }
  });
});
