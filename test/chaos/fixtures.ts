// What the chaos unit tests share: a planned operation with the plan's quietest choices
// (one client, sent once, no replays, nothing changed or cancelled), given what the test
// is about.
import type { PlannedOp } from '../../tools/chaos/plan.js';

export function plannedOp(op: Pick<PlannedOp, 'key' | 'tenant' | 'type' | 'body'> & Partial<PlannedOp>): PlannedOp {
  return {
    index: 0,
    profile: 'normal',
    atMs: 0,
    concurrency: 1,
    keyForm: 'bare',
    firstApi: 0,
    getAfter202: 0,
    lateReplaysMs: [],
    clientSeed: 1,
    ...op,
  };
}
