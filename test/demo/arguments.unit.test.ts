// The command line of `npm run demo` (tools/demo/program.ts), with no stack: its help, and
// each bad argument refused with one line naming the problem and a usage line, exit 2,
// before anything is sent to the API or the sandboxes.
import { describe, expect, it } from 'vitest';
import { runDemoCli } from '../../tools/demo/program.js';
import { runHere } from '../cli/in-process.js';
import { runCommandLine } from '../client/helpers.js';
import { useRequestCounter } from '../support/loopback.js';

// Stands in for the API and both sandboxes at once, and only counts: a usage error must not reach it.
const counter = useRequestCounter();
const DEMO = 'tools/demo/main.ts';

describe('npm run demo -- --help', () => {
  it('names every option with its default, how to start the stack, and exits 0 (as a process)', async () => {
    const run = await runCommandLine(DEMO, ['--help']);
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('Usage: npm run demo -- [options]');
    // Commander wraps the help to the terminal's width: compare with the line breaks folded.
    const help = run.stdout.replace(/\s+/g, ' ');
    for (const words of [
      '--api-url <url>',
      '(default: "http://localhost:3000", env: RETRYSAFE_API_URL)',
      '--api-key <secret>',
      '(env: RETRYSAFE_API_KEY)',
      '--bank-url <url>',
      '(default: "http://localhost:4001")',
      '--reservations-url <url>',
      '(default: "http://localhost:4002")',
      '--timeout <duration>',
      '(default: 60s)',
      'npm start -- --faults',
      "turns the bank's faults on for its own steps and off again",
    ])
      expect(help, words).toContain(words);
  });
});

describe('bad arguments: one line naming the problem, a usage line, exit 2, nothing sent', () => {
  it.each([
    ['a bad --bank-url', ['--bank-url', 'bank'], /'--bank-url <url>' argument 'bank' is invalid/],
    [
      'a bad --reservations-url',
      ['--reservations-url', 'ftp://x'],
      /'--reservations-url <url>' argument 'ftp:\/\/x' is invalid\. must start with http:\/\/ or https:\/\//,
    ],
    ['an --api-url that is not a URL', ['--api-url', 'localhost:3000'], /'--api-url <url>' argument 'localhost:3000' is invalid/],
    ['a bad --timeout', ['--timeout', 'forever'], /'--timeout <duration>' argument 'forever' is invalid/],
    ['a --timeout over a day', ['--timeout', '2d'], /'--timeout <duration>' argument '2d' is invalid\. must be at most 1 day/],
    ['--api-key without its value', ['--api-key'], /option '--api-key <secret>' argument missing/],
    ['an unknown option', ['--faults'], /unknown option '--faults'/],
    ['an argument it does not take', ['pay'], /too many arguments\. Expected 0 arguments but got 1/],
  ])('(in process) %s', async (_name, args, problem) => {
    const before = counter.received();
    // Everything reachable first, so only the bad value stands between the demo and a run.
    const everywhere = ['--api-url', counter.url(), '--bank-url', counter.url(), '--reservations-url', counter.url()];
    const run = await runHere([...everywhere, ...args], runDemoCli);
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^error: /);
    expect(lines[0]).toMatch(problem);
    expect(lines[1]).toMatch(/^usage: npm run demo -- \[--api-url <url>\] .*\(more: npm run demo -- --help\)$/);
    expect(counter.received() - before).toBe(0);
  });

  it('a RETRYSAFE_API_URL that is not a URL is refused like the option (as a process)', async () => {
    const run = await runCommandLine(DEMO, ['--bank-url', counter.url()], { RETRYSAFE_API_URL: 'nowhere' });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(
      /^error: option '--api-url <url>' value 'nowhere' from env 'RETRYSAFE_API_URL' is invalid\. must be a URL/,
    );
    expect(run.stdout).toBe('');
  });
});
