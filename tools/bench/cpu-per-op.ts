// `npx tsx tools/bench/cpu-per-op.ts`: the CPU time each process spends per new operation, so that
// a change meant to make retrysafe cheaper is judged by what it saves, on a shared machine
// where latency is noise. It starts one tuned Temporal dev server on a SQLite file
// (tools/dev-server.ts) and the sandboxes (tools/bench/stack.ts), then for each variant (a
// checkout of the repository: a folder, or a git revision it unpacks) that variant's own
// worker and API as production runs them (worker/main.ts, client/api/server.ts, or their
// compiled twins under dist/), each on its own task queue. With --bare, plain Temporal
// making the same keyed HTTP calls runs beside them: the main bench's fair baseline
// (tools/bench/baseline/, on its worker tools/bench/processes/worker.ts). Batches of N operations run at each concurrency, the variants interleaved and
// their order reversed every round (A B, then B A), one batch at a time; each batch reads
// every process's CPU time (/proc/<pid>/stat: user + system, all threads) before and after.
// Figures are ms of CPU per operation per process, summed over the rounds.
//
// With --replay <history.json>, no stack: each variant's workflow bundle replays the stored
// history N times per round in this process, variants interleaved the same way, and the
// figure is this process's CPU per execution. That is the workflow code's own cost (and the
// SDK's around it), free of the network and of Temporal: the finer instrument for a change
// to workflows/ that keeps its commands (a history recorded before it still replays).
//
// The parts live in tools/bench/cpu/: options.ts (the command line), variants.ts (the
// checkouts), stack-run.ts (the stack and the batches; it sends the main bench's requests),
// replay.ts (--replay), report.ts and profile.ts (what is printed).
import { parseOptions } from './cpu/options.js';
import { replayMain } from './cpu/replay.js';
import { runOnStack } from './cpu/stack-run.js';

const opts = parseOptions(process.argv.slice(2));
(opts.replay ? replayMain(opts, opts.replay) : runOnStack(opts)).catch((err) => {
  console.error(err);
  process.exit(1);
});
