// How the repository weighs its tooling against its product, and where its long functions
// are. Both read the files git tracks (`git ls-files`), as committed or as changed in the
// working tree, so what is counted is what a clone holds.
//
// - product: the .ts/.mjs/.js/.cjs/.sh sources under workflows/, activities/, worker/,
//   client/, common/ and downstream/, and any `check-definitions` script wherever it sits;
// - tooling: the same kinds of source everywhere else but test/, docs/ and examples/
//   (tools/, the root configs), and every script under .ci/ whatever its name. Data (JSON,
//   Markdown, SVG, lock files) is not source.
// Lines are newline characters, blank and comment lines included (what `wc -l` says).
//
// A function is every function-like node the TypeScript compiler finds (declarations,
// expressions, arrows, methods, accessors, constructors), measured from the line of its
// first token to the line of its last, signature and braces included. A function inside a
// longer one is counted on its own too.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const SOURCE = /\.(ts|mts|cts|mjs|js|cjs|sh)$/;
const PRODUCT = /^(workflows|activities|worker|client|common|downstream)\//;
const NEITHER = /^(test|docs|examples)\//;
/** The definitions' checker is the product's, wherever it is placed. */
const PRODUCT_ANYWHERE = /(^|\/)check-definitions\.[a-z]+$/;

export type Side = 'product' | 'tooling';

/** Which side a tracked path weighs on, or undefined when it is neither (tests, docs, examples, data). */
export function sideOf(path: string): Side | undefined {
  if (path.startsWith('.ci/')) return 'tooling';
  if (!SOURCE.test(path)) return undefined;
  if (PRODUCT.test(path) || PRODUCT_ANYWHERE.test(path)) return 'product';
  if (NEITHER.test(path)) return undefined;
  return 'tooling';
}

/** Every tracked file that still exists in the working tree. */
export function trackedFiles(): string[] {
  const deleted = new Set(
    execFileSync('git', ['ls-files', '--deleted'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean),
  );
  return execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f && !deleted.has(f));
}

function lineCount(path: string): number {
  return readFileSync(join(ROOT, path), 'utf8').split('\n').length - 1;
}

/** Lines of product and of tooling, and the files behind each. */
export function weights(files = trackedFiles()): Record<Side, { lines: number; files: string[] }> {
  const out: Record<Side, { lines: number; files: string[] }> = {
    product: { lines: 0, files: [] },
    tooling: { lines: 0, files: [] },
  };
  for (const f of files) {
    const side = sideOf(f);
    if (!side) continue;
    out[side].lines += lineCount(f);
    out[side].files.push(f);
  }
  return out;
}

export interface LongFunction {
  file: string;
  /** 1-based line of its first token. */
  line: number;
  lines: number;
  name: string;
}

function nameOf(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  if (node.name) return node.name.getText(source);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText(source);
  return '(anonymous)';
}

/** The functions of one TypeScript or JavaScript file longer than `max` lines. */
export function longFunctionsIn(file: string, text: string, max: number): LongFunction[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: LongFunction[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const fn = node as ts.FunctionLikeDeclaration;
      const first = source.getLineAndCharacterOfPosition(fn.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(fn.getEnd()).line;
      const lines = last - first + 1;
      if (lines > max) out.push({ file, line: first + 1, lines, name: nameOf(fn, source) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** Every function over `max` lines in the tracked sources outside test/, longest first. */
export function longFunctions(max: number, files = trackedFiles()): LongFunction[] {
  return files
    .filter((f) => /\.(ts|mts|cts|mjs|js|cjs)$/.test(f) && !f.startsWith('test/'))
    .flatMap((f) => longFunctionsIn(f, readFileSync(join(ROOT, f), 'utf8'), max))
    .sort((a, b) => b.lines - a.lines);
}

// `npx tsx test/lint/weights.ts`: the figures, for a commit message or a report.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const w = weights();
  console.log(`product ${w.product.lines} lines in ${w.product.files.length} files`);
  console.log(`tooling ${w.tooling.lines} lines in ${w.tooling.files.length} files`);
  const long = longFunctions(80);
  console.log(`functions over 80 lines outside test/: ${long.length}`);
  for (const f of long) console.log(`  ${f.file}:${f.line} ${f.name} (${f.lines} lines, ${sideOf(f.file) ?? 'neither'})`);
}
