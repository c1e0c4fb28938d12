// The saga's own counters, exported with the worker's runtime metrics (Prometheus on
// WORKER_METRICS_ADDRESS). The SDK's workflow meter skips emission while replaying, so a
// worker restart does not count a compensation twice. Labels are bounded: no keys.
import { metricMeter } from '@temporalio/workflow';
import type { CompensationName, OperationType, StepName } from './contracts.js';

const compensations = metricMeter.createCounter('retrysafe_compensations', 'runs', 'Compensations run to completion');
const fences = metricMeter.createCounter('retrysafe_fences', 'steps', 'Steps fenced: outcome unknown at the deadline');
const attention = metricMeter.createCounter(
  'retrysafe_operations_needing_attention',
  'operations',
  'Operations whose compensation kept failing past RETRYSAFE_ATTENTION_AFTER',
);
const outcomes = metricMeter.createCounter('retrysafe_operations_completed', 'operations', 'Operations finished, by outcome');

export const sagaMetrics = {
  compensated: (compensation: CompensationName) => compensations.add(1, { compensation }),
  fenced: (step: StepName) => fences.add(1, { step }),
  needsAttention: (type: OperationType) => attention.add(1, { type }),
  completed: (type: OperationType, status: 'succeeded' | 'failed', code = 'none') => outcomes.add(1, { type, status, code }),
};
