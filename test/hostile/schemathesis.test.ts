// Schema-driven fuzz: schemathesis reads the live API's /openapi.json and sends what the
// schema allows and what it forbids (examples, coverage of boundaries, random fuzzing),
// against the real stack: the shared dev server, a worker, the bank and the reservations,
// with API keys configured so the bearer auth is exercised. Every answer must be no 5xx,
// a documented status, a documented media type, documented headers, and match its schema.
// SCHEMATHESIS_DEBUG=1 prints the whole run; SCHEMATHESIS_EXTRA adds arguments, e.g.
// "--report har --report-har-path /tmp/fuzz.har" to see every request and answer.
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { useFullStack } from '../support/full-stack.js';
import { uniqueId } from '../support/stack.js';
import { ensureSchemathesis, runSchemathesis, SCHEMATHESIS_VERSION } from './schemathesis.js';
import { startTestApi, type TestApi } from './support.js';

const SEED = 20_260_501;
const MAX_EXAMPLES = 25;
// Every check the fuzzer has, not only its defaults: beside conformance it also requires
// that what the schema forbids is refused and what it allows is accepted, that an
// undocumented method gets 405, that a missing required header or credentials are refused.
const CHECKS = ['all'];
/** The two answers that depend on state rather than on the request's shape (see the file). */
const CONFIG_FILE = fileURLToPath(new URL('./schemathesis.toml', import.meta.url));

let bin: string;
let api: TestApi;
const tenant = uniqueId('fuzz');
const secret = `sk_${uniqueId('fuzz')}_0123456789`;

beforeAll(() => {
  // First: a missing tool must fail the suite with its own message, before anything starts.
  bin = ensureSchemathesis();
});
const stack = useFullStack({ name: 'schemathesis', faults: false, api: 'none' });

beforeAll(async () => {
  api = await startTestApi({
    env: { RETRYSAFE_TASK_QUEUE: stack.taskQueue, RETRYSAFE_API_KEYS: `${secret}=${tenant}`, RETRYSAFE_STEP_DEADLINE: '10s' },
  });
});

afterAll(async () => {
  await api?.close();
});

describe(`schemathesis ${SCHEMATHESIS_VERSION} against /openapi.json`, () => {
  it('finds no server error and no answer the document does not declare', { timeout: 240_000 }, async () => {
    const run = await runSchemathesis(
      bin,
      [
        '--config-file',
        CONFIG_FILE,
        'run',
        `${api.url}/openapi.json`,
        '--header',
        `Authorization: Bearer ${secret}`,
        '--checks',
        CHECKS.join(','),
        '--max-examples',
        String(MAX_EXAMPLES),
        '--seed',
        String(SEED),
        '--phases',
        'examples,coverage,fuzzing',
        '--generation-database',
        'none',
        '--workers',
        '2',
        '--request-timeout',
        '70',
        '--no-color',
        ...(process.env.SCHEMATHESIS_EXTRA ?? '').split(' ').filter(Boolean),
      ],
      220_000,
      mkdtempSync(join(inject('tmpRoot'), 'schemathesis-')),
    );
    if (process.env.SCHEMATHESIS_DEBUG) console.log(run.output);
    const summary = run.output
      .split('\n')
      .filter((l) => /API Operations|Test Phases|Test cases|Examples|Coverage|Fuzzing|passed|failed|errors?\b|Seed/i.test(l))
      .slice(-20)
      .join('\n');
    console.log(`schemathesis (seed ${SEED}, --max-examples ${MAX_EXAMPLES}, checks ${CHECKS.join(', ')}):\n${summary}`);
    expect(run.exitCode, run.output.slice(-12_000)).toBe(0);
    // Exercised for real: the fuzz reached the routes, and valid starts ran as operations.
    const tested = /Tested:\s*(\d+)/.exec(run.output);
    expect(Number(tested?.[1] ?? 0)).toBeGreaterThanOrEqual(7);
    const started = Number((await stack.temporal.workflow.count(`Tenant = '${tenant}'`)).count);
    console.log(`schemathesis: ${started} operations started by the fuzz`);
    expect(started).toBeGreaterThan(0);
  });
});
