// The catalog of operation definitions: the built-in ones and those loaded from outside
// the repository (common/definition-folders.ts loads them by configuration). The API, the worker,
// the client generator and the chaos run each hold one and ask it; nothing else lists
// operation types, step names or compensation names.
//
// Inside the workflow bundle the catalog is module state: the bundle's entry adds the
// definitions loaded from outside (worker/bundle.ts writes that entry), so the one generic
// workflow finds every operation by its workflow type. Deterministic: the same definitions,
// in the same order, in every execution of one bundle.
import { defineOperation, type OperationDefinition, type StepDefinition } from './definition.js';
import { BUILT_IN_DEFINITIONS } from './definitions/index.js';

export class DefinitionCatalog {
  private readonly byType = new Map<string, OperationDefinition>();
  private readonly byPlural = new Map<string, OperationDefinition>();

  constructor(definitions: readonly OperationDefinition[]) {
    for (const definition of definitions) {
      // Loaded from outside, a definition may not have gone through defineOperation.
      defineOperation(definition);
      if (this.byType.has(definition.type)) throw new Error(`operation type ${definition.type} is defined twice`);
      const other = this.byPlural.get(definition.plural);
      if (other) throw new Error(`the collection /v1/${definition.plural} of ${definition.type} is already ${other.type}'s`);
      this.byType.set(definition.type, definition);
      this.byPlural.set(definition.plural, definition);
    }
    this.checkSharedNames();
  }

  /** This catalog and more definitions, checked together as one (this one is left as it was). */
  with(more: readonly OperationDefinition[]): DefinitionCatalog {
    return new DefinitionCatalog([...this.all, ...more]);
  }

  /** Every definition, built-in ones first, in the order they were given. */
  get all(): readonly OperationDefinition[] {
    return [...this.byType.values()];
  }

  get types(): string[] {
    return [...this.byType.keys()];
  }

  get(type: string): OperationDefinition | undefined {
    return this.byType.get(type);
  }

  has(type: unknown): type is string {
    return typeof type === 'string' && this.byType.has(type);
  }

  /** Every service a step or compensation speaks to (the worker needs a base URL for each declared one). */
  get declaredServices(): string[] {
    const services = new Set<string>();
    for (const definition of this.all) {
      for (const step of definition.steps) {
        if (step.call.kind === 'http' || step.compensation?.call.kind === 'http') services.add(step.service);
      }
    }
    return [...services];
  }

  /** Activities with code of their own that the definitions call, by name. */
  get activityNames(): string[] {
    const names = new Set<string>();
    for (const definition of this.all) {
      for (const step of definition.steps) {
        for (const call of [step.call, step.compensation?.call]) if (call?.kind === 'activity') names.add(call.activity);
      }
    }
    return [...names];
  }

  /**
   * A step shared by several operations (the charge of a payment and of a checkout) is one
   * thing: the same name must not mean another key, service or compensation, or the metrics
   * and the audit that count by name would mix two different effects.
   */
  private checkSharedNames(): void {
    const seen = new Map<string, { type: string; step: StepDefinition }>();
    for (const definition of this.byType.values()) {
      for (const step of definition.steps) {
        const earlier = seen.get(step.name);
        if (
          earlier &&
          (earlier.step.keySuffix !== step.keySuffix ||
            earlier.step.service !== step.service ||
            earlier.step.compensation?.name !== step.compensation?.name)
        ) {
          throw new Error(`step ${step.name} of ${definition.type} differs from the step of that name in ${earlier.type}`);
        }
        if (!earlier) seen.set(step.name, { type: definition.type, step });
      }
    }
  }
}

/** The built-in operations alone (what a repository without configured extensions runs). */
export const builtInCatalog = new DefinitionCatalog(BUILT_IN_DEFINITIONS);

let bundled: DefinitionCatalog = builtInCatalog;

/** Adds definitions loaded from outside to the workflow bundle's catalog; called by the bundle's entry. */
export function registerDefinitions(definitions: readonly OperationDefinition[]): void {
  bundled = new DefinitionCatalog([...bundled.all, ...definitions]);
}

/** The catalog of the workflow bundle this code runs in. */
export function bundledCatalog(): DefinitionCatalog {
  return bundled;
}
