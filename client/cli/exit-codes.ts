// Exit codes of the `retrysafe` CLI, one per outcome a script must tell apart.
export const EXIT = {
  /** The operation succeeded (or the command did what it was asked: a cancel is under way or done). */
  ok: 0,
  /** The operation failed with a business error (insufficient_funds, out_of_stock...). */
  failed: 1,
  /** Bad arguments: nothing was sent. */
  usage: 2,
  /** The deadline passed and the operation is still running: `retrysafe wait <key>`. */
  pending: 3,
  /** Anything else: API unreachable, 401, 404, 422. */
  error: 4,
  /** `cancel` came too late: the operation had already ended otherwise (its outcome is printed). */
  completed: 5,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
