// What the launcher says to its children and reads from them, with no process started: the
// dev server's command line, the worker's readiness line, and a port conflict in a child's
// output.
import { prettyFactory } from 'pino-pretty';
import { describe, expect, it } from 'vitest';
import { DEV_SERVER_TUNING, devServerArgs } from '../../tools/dev-server.js';
import { isWorkerReadyLine } from '../../tools/launcher/parts.js';
import { addressInUse } from '../../tools/supervisor/ports.js';

describe('the dev server command line', () => {
  it('names the SQLite file, the ports and the namespace, and passes every dynamic config value as JSON', () => {
    const args = devServerArgs({ bin: 'temporal', dbFile: '/data/temporal.db', port: 7233, uiPort: 8233, logLevel: 'warn' });
    expect(args.slice(0, 12)).toEqual([
      'server',
      'start-dev',
      '--ip',
      '127.0.0.1',
      '--port',
      '7233',
      '--log-level',
      'warn',
      '--namespace',
      'default',
      '--db-filename',
      '/data/temporal.db',
    ]);
    expect(args.slice(12, 14)).toEqual(['--ui-port', '8233']);
    expect(args.slice(14)).toEqual(DEV_SERVER_TUNING.flatMap((s) => s.args));
    expect(args).toContain('history.transferProcessorMaxPollRPS=1000');
    expect(args).toContain('matching.enableFairness=true');
    expect(devServerArgs({ bin: 'temporal', port: 7300, headless: true })).toContain('--headless');
    expect(devServerArgs({ bin: 'temporal', port: 7300, headless: true })).not.toContain('--db-filename');
  });

  it('leaves out the tuning settings named in `without`, and refuses a name it does not know', () => {
    const [first, ...rest] = DEV_SERVER_TUNING;
    const args = devServerArgs({ bin: 'temporal', port: 7300, without: [first!.name] });
    expect(args.slice(10)).toEqual(rest.flatMap((s) => s.args));
    expect(() => devServerArgs({ bin: 'temporal', port: 7300, without: ['no-such-setting'] })).toThrow(/no-such-setting/);
  });

  it('never turns SQLite durability off: WAL with synchronous=full', () => {
    const pragmas = DEV_SERVER_TUNING.flatMap((s) => s.args.filter((_, i, all) => all[i - 1] === '--sqlite-pragma'));
    // Without a synchronous pragma at all, the check below would pass on nothing.
    expect(pragmas).toEqual(expect.arrayContaining(['journal_mode=wal', 'synchronous=full']));
    expect(pragmas.filter((p) => /^synchronous=/i.test(p))).not.toContainEqual(expect.stringMatching(/=(off|0)$/i));
  });
});

describe('worker readiness line', () => {
  it('matches the JSON line and the pino-pretty one (colored, as on a terminal)', () => {
    const entry = { level: 30, time: Date.now(), pid: 1, hostname: 'h', name: 'worker', taskQueue: 'q', msg: 'worker ready' };
    expect(isWorkerReadyLine(JSON.stringify(entry))).toBe(true);
    const pretty = prettyFactory({ colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' })(entry);
    expect(isWorkerReadyLine(pretty.split('\n')[0]!)).toBe(true);
  });

  it('does not match other lines that mention it', () => {
    expect(isWorkerReadyLine(JSON.stringify({ level: 50, msg: 'worker ready check failed' }))).toBe(false);
    expect(isWorkerReadyLine('[12:00:00.000] ERROR (worker): worker ready never came')).toBe(false);
  });
});

describe('port conflicts in a child output', () => {
  it("finds the port in Node's and Go's messages", () => {
    expect(addressInUse('Error: listen EADDRINUSE: address already in use 127.0.0.1:4001')).toEqual({ port: 4001 });
    expect(addressInUse('listen tcp 127.0.0.1:7233: bind: address already in use')).toEqual({ port: 7233 });
    expect(addressInUse('all good on 127.0.0.1:4001')).toBeUndefined();
  });
});
