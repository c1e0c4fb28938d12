// Config parsing shared by every process: each reads its variables once, from a zod
// schema, and fails at start-up with one clear line per bad variable.
import ms from 'ms';
import { z } from 'zod';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Gathers the problems of several parsers, so one ConfigError can name them all:
 * `collect(parse)` answers what `parse` returns, or undefined once it has kept its problems.
 */
export function problemCollector(problems: string[]) {
  return <T>(parse: () => T): T | undefined => {
    try {
      return parse();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems);
      return undefined;
    }
  };
}

/** A duration such as `60s`, `5m`, `7d` or plain milliseconds, as a number of milliseconds. */
export function duration(opts: { min?: number; max?: number } = {}) {
  return z.string().transform((raw, ctx) => {
    const trimmed = raw.trim();
    const value = /^\d+$/.test(trimmed) ? Number(trimmed) : (ms(trimmed as ms.StringValue) as number | undefined);
    if (value === undefined || !Number.isFinite(value) || value < 0) {
      ctx.addIssue({ code: 'custom', message: `"${raw}" is not a duration (examples: 500ms, 60s, 5m, 7d)` });
      return z.NEVER;
    }
    if (opts.min !== undefined && value < opts.min) {
      ctx.addIssue({ code: 'custom', message: `"${raw}" is below the minimum of ${ms(opts.min, { long: true })}` });
      return z.NEVER;
    }
    if (opts.max !== undefined && value > opts.max) {
      ctx.addIssue({ code: 'custom', message: `"${raw}" is above the maximum of ${ms(opts.max, { long: true })}` });
      return z.NEVER;
    }
    return value;
  });
}

/** A TCP port (0 means any free port). */
export const port = z
  .string()
  .regex(/^\d+$/, 'must be a whole number')
  .transform(Number)
  .refine((n) => n >= 0 && n <= 65535, 'must be between 0 and 65535');

/** `1`/`true`/`yes` or `0`/`false`/`no`. */
export const flag = z
  .string()
  .transform((s) => s.trim().toLowerCase())
  .refine((s) => ['1', 'true', 'yes', '0', 'false', 'no', ''].includes(s), 'must be 1/true/yes or 0/false/no')
  .transform((s) => ['1', 'true', 'yes'].includes(s));

/**
 * A value as a config error may show it: any `user:password@` of a URL in it replaced, so
 * a message never repeats credentials that were meant for a service.
 */
export function withoutCredentials(value: string): string {
  return value.replace(/(\/\/)[^/?#\s@]*@/g, '$1***@');
}

export const httpUrl = z
  .string()
  .url('must be a URL such as http://127.0.0.1:4001')
  .refine((u) => /^https?:\/\//.test(u), 'must start with http:// or https://')
  .transform((u) => u.replace(/\/+$/, ''));

export const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/**
 * Parses `env` with a schema whose keys are variable names. Empty strings count as unset,
 * so `FOO= npm start` falls back to the default instead of failing. A message shows the
 * bad value without a URL's credentials (withoutCredentials).
 */
export function parseEnv<S extends z.ZodRawShape>(
  shape: S,
  env: Record<string, string | undefined> = process.env,
): z.infer<z.ZodObject<S>> {
  const input: Record<string, string> = {};
  for (const name of Object.keys(shape)) {
    const value = env[name];
    if (value !== undefined && value !== '') input[name] = value;
  }
  const result = z.object(shape).safeParse(input);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((issue) => {
        const name = String(issue.path[0] ?? '?');
        const shown = input[name] === undefined ? '(unset)' : JSON.stringify(withoutCredentials(input[name]));
        return `${name}=${shown}: ${issue.message}`;
      }),
    );
  }
  return result.data;
}
