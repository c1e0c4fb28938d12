// The programs operations start with (workflows/program.ts), one per definition, and their
// versions: the digest of the program, the data every operation started on it records. Two
// operations started on the same definition and settings have the same version; any change
// a workflow could see (a step, a key suffix, a body field, a business error, a
// compensation, a setting's value) gives another. Computed once per definition when a
// process loads its definitions, never per request.
//
// A definition's settings (checkout's hold time) keep their defaults unless
// RETRYSAFE_SETTINGS="<type>.<setting>=<integer>,..." says otherwise; the API, the worker's
// start check and check-definitions read the same variable, so all three name the same versions.
import { defaultSettings, type OperationDefinition } from '../workflows/definition.js';
import { stepsProgram, type OperationProgram } from '../workflows/program.js';
import { ConfigError } from './env.js';
import { fingerprintOf } from './http/fingerprint.js';

/** Hex characters of the digest kept: 64 bits, ample for the versions one type will ever have. */
const VERSION_LENGTH = 16;

export function versionOf(program: Omit<OperationProgram, 'version'>): string {
  return fingerprintOf(program).slice(0, VERSION_LENGTH);
}

/** The program an operation of `definition` starts with, its settings' defaults overridden by `settings`. */
export function programFor(definition: OperationDefinition, settings: Readonly<Record<string, number>> = {}): OperationProgram {
  const program = stepsProgram(definition, { ...defaultSettings(definition), ...settings });
  return { version: versionOf(program), ...program };
}

/** One entry of RETRYSAFE_SETTINGS, as written. */
export interface SettingOverride {
  type: string;
  setting: string;
  value: number;
}

const ENTRY = /^([a-z][a-z0-9_]{0,39})\.([a-z][A-Za-z0-9]{0,39})=(-?\d{1,15})$/;

/** `<type>.<setting>=<integer>,...`: the syntax alone (which types and settings exist is programsOf's to check). */
export function parseSettingOverrides(raw: string | undefined): SettingOverride[] {
  if (raw === undefined || raw.trim() === '') return [];
  const problems: string[] = [];
  const overrides: SettingOverride[] = [];
  for (const [i, part] of raw.split(',').entries()) {
    const match = ENTRY.exec(part.trim());
    if (!match) {
      problems.push(`RETRYSAFE_SETTINGS entry ${i + 1} must be <type>.<setting>=<integer> (e.g. checkout.holdTtlSeconds=600)`);
      continue;
    }
    overrides.push({ type: match[1]!, setting: match[2]!, value: Number(match[3]) });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return overrides;
}

/** Each definition's program with the overrides applied; an override that names nothing, or leaves its bounds, is refused. */
export function programsOf(
  definitions: readonly OperationDefinition[],
  overrides: readonly SettingOverride[] = [],
): Map<string, OperationProgram> {
  const problems: string[] = [];
  const values = new Map<string, Record<string, number>>();
  for (const { type, setting, value } of overrides) {
    const declared = definitions.find((d) => d.type === type)?.settings?.[setting];
    const where = `RETRYSAFE_SETTINGS ${type}.${setting}`;
    if (!definitions.some((d) => d.type === type)) problems.push(`${where}: no operation of type ${type} is defined`);
    else if (!declared) problems.push(`${where}: the ${type} definition declares no setting ${setting}`);
    else if (value < declared.minimum || value > declared.maximum) {
      problems.push(`${where} must be between ${declared.minimum} and ${declared.maximum}`);
    } else values.set(type, { ...values.get(type), [setting]: value });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return new Map(definitions.map((d) => [d.type, programFor(d, values.get(d.type))]));
}
