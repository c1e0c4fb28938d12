// The order the cluster's processes start in: in waves, each wave every process whose
// dependencies (`after`) are all ready, started together. After the wave that brings
// PostgreSQL up, the caller's steps that need it run (the schema goes in before any
// Temporal service needs it). The supervised cluster and the by-hand runner both start so.
import type { ClusterProcess } from './cluster.js';

export async function startInWaves(
  processes: readonly ClusterProcess[],
  start: (process: ClusterProcess) => Promise<void>,
  afterPostgres: () => Promise<void>,
): Promise<void> {
  const ready = new Set<string>();
  const pending = [...processes];
  while (pending.length > 0) {
    const wave = pending.filter((p) => p.after.every((a) => ready.has(a)));
    if (wave.length === 0) throw new Error(`cannot order ${pending.map((p) => p.name).join(', ')}`);
    await Promise.all(
      wave.map(async (p) => {
        await start(p);
        ready.add(p.name);
      }),
    );
    for (const p of wave) pending.splice(pending.indexOf(p), 1);
    if (wave.some((p) => p.role === 'postgres')) await afterPostgres();
  }
}
