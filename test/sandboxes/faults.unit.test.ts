// The fault injection both sandboxes share (SANDBOX_FAULTS=1): PUT /_faults changes only
// the fields it is sent, the probabilities are drawn from the injected source, a shutdown
// ends injected delays at once without doing the effect, and without SANDBOX_FAULTS there
// are no /_faults routes. What each fault does to each effect is in the sandboxes' own
// suites (bank/faults.unit.test.ts, reservations/faults.unit.test.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_FAULTS } from '../../downstream/shared/faults.js';
import { expectProblem, LOST_ANSWER, networkError, sandboxKey } from '../support/sandbox-harness.js';
import { effect, SANDBOXES, type SandboxKind, type StartedSandbox } from './kinds.js';

describe.each(SANDBOXES)('$name with SANDBOX_FAULTS=1', (kind: SandboxKind) => {
  let service: StartedSandbox;
  beforeAll(async () => {
    service = await kind.start({ faults: true });
  });
  afterAll(async () => {
    await service.close();
  });

  it('PUT /_faults changes only the fields sent; GET shows the current faults; bad fields are 400', async () => {
    expect((await service.putFaults(NO_FAULTS)).status).toBe(200);
    expect((await service.putFaults({ delayMs: 5 })).body).toEqual({
      dropResponseAfterCommit: 0,
      crashAfterCommit: 0,
      failBeforeCommit: 0,
      delayMs: 5,
      down: false,
    });
    await service.putFaults({ failBeforeCommit: 0.25 });
    expect((await service.call('GET', '/_faults')).body).toEqual({
      dropResponseAfterCommit: 0,
      crashAfterCommit: 0,
      failBeforeCommit: 0.25,
      delayMs: 5,
      down: false,
    });
    for (const bad of [
      { dropResponse: 1 },
      { failBeforeCommit: 1.5 },
      { crashAfterCommit: -0.1 },
      { crashAfterCommit: 2 },
      { delayMs: 120_001 },
      { down: 'yes' },
    ]) {
      expectProblem(await service.putFaults(bad), 400, 'invalid_request');
    }
    expect((await service.call('GET', '/_faults')).body).toMatchObject({ failBeforeCommit: 0.25, delayMs: 5 });
  });

  it('draws fault probabilities from the injected random source', async () => {
    const draws = [0.5, 0.2];
    const seeded = await kind.start({ faults: true, random: () => draws.shift() ?? 0.99 });
    try {
      await seeded.putFaults({ dropResponseAfterCommit: 0.3 });
      const kept = await effect(kind, seeded.call, sandboxKey('seeded')); // draws 0.5
      const dropped = await networkError(effect(kind, seeded.call, sandboxKey('seeded'))); // 0.2
      expect(kept.status).toBe(201);
      expect(dropped).toMatch(LOST_ANSWER);
      // The dropped answer's effect was committed all the same.
      expect((await seeded.call('GET', kind.seededRead.path)).body).toEqual(kind.seededRead.afterTwoEffects);
    } finally {
      await seeded.close();
    }
  });

  it('a shutdown ends injected delays at once with 503 shutting_down, the effect not done', async () => {
    const dir = mkdtempSync(join(tmpdir(), `retrysafe-${kind.name}-`));
    try {
      const closing = await kind.start({ faults: true, dir });
      await closing.putFaults({ delayMs: 60_000 });
      const key = sandboxKey('shutdown');
      const started = Date.now();
      const slow = effect(kind, closing.call, key);
      await sleep(100);

      await closing.close();

      expectProblem(await slow, 503, 'shutting_down');
      expect(Date.now() - started).toBeLessThan(5_000);
      // Started again on the same file: nothing of that request is there.
      const reopened = await kind.start({ dir });
      try {
        expect((await reopened.call('GET', kind.seededRead.path)).body).toEqual(kind.seededRead.before);
        expect(reopened.db.prepare(`SELECT count(*) AS n FROM ${kind.ledger} WHERE key = ?`).get(key)).toEqual({ n: 0 });
        expect(reopened.keyRows(key)).toBe(0);
      } finally {
        await reopened.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.each(SANDBOXES)('$name without SANDBOX_FAULTS', (kind: SandboxKind) => {
  it('has no /_faults routes, and the effect runs untouched', async () => {
    const plain = await kind.start({ faults: false });
    try {
      expectProblem(await plain.call('GET', '/_faults'), 404, 'not_found');
      expectProblem(await plain.putFaults({ down: true }), 404, 'not_found');
      expect((await effect(kind, plain.call, sandboxKey('plain'))).status).toBe(201);
    } finally {
      await plain.close();
    }
  });
});
