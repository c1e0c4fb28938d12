// Holds expire on their own: the sweeper gives back the stock of due holds now and then,
// so the ledger itself catches up even when no request arrives (reads already count due
// holds as given back, and every write expires them first).
import { runPeriodically } from '../shared/periodic.js';
import type { ReservationLedger } from './ledger.js';

export function startSweeper(ledger: ReservationLedger, intervalMs: number, onError: (err: unknown) => void): () => void {
  return runPeriodically(() => ledger.sweep(), intervalMs, onError);
}
