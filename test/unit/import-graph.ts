// The static runtime import graph of the product's sources (functions/, lib/, bin/, scripts/),
// read with the TypeScript parser: what test/unit/import-rules.test.ts checks the layering with.
// Type-only imports are left out (`import type`, `export type`: erased when the file runs); every
// other import counts, including `import { type X } from` (verbatimModuleSyntax keeps it as a
// side-effect import), `export ... from` and `import('...')` with a literal specifier.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

export const ROOT = resolve(import.meta.dirname, '../..');
export const SOURCE_FOLDERS = ['functions', 'lib', 'bin', 'scripts'];

export interface ImportEdge {
  /** Importing file, relative to the repository root (`lib/cdk/museum-app.ts`). */
  from: string;
  /** A repository file (`functions/routes.ts`) or a package name (`@middy/core`, `valibot`). */
  to: string;
  /** Whether `to` is a package rather than a file. */
  isPackage: boolean;
  /** The specifier as written, for messages. */
  specifier: string;
}

function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))
    .map((name) => join(folder, name).split('\\').join('/'))
    .sort();
}

function runtimeSpecifiers(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      if (node.importClause?.phaseModifier !== ts.SyntaxKind.TypeKeyword && ts.isStringLiteral(node.moduleSpecifier))
        found.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node)) {
      if (!node.isTypeOnly && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      // A computed specifier (the local gateway loading a built bundle) names no source file.
      if (argument && ts.isStringLiteralLike(argument)) found.push(argument.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** `@aws-sdk/lib-dynamodb/x` -> `@aws-sdk/lib-dynamodb`; `valibot` -> `valibot`. */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

function edgesOf(file: string): ImportEdge[] {
  return runtimeSpecifiers(file).flatMap((specifier): ImportEdge[] => {
    if (specifier.startsWith('node:')) return [];
    if (!specifier.startsWith('.')) return [{ from: file, to: packageName(specifier), isPackage: true, specifier }];
    const target = relative(ROOT, resolve(ROOT, dirname(file), specifier))
      .split('\\')
      .join('/');
    if (!existsSync(join(ROOT, target))) throw new Error(`${file} imports ${specifier}, which is not a file`);
    return [{ from: file, to: target, isPackage: false, specifier }];
  });
}

/** Every .ts file in the source folders, relative to the repository root. */
export function productFiles(): string[] {
  return SOURCE_FOLDERS.flatMap(sourceFiles);
}

/** The runtime imports of every .ts file in `folders` (the product's source folders unless given). */
export function importGraph(folders = SOURCE_FOLDERS): ImportEdge[] {
  return folders.flatMap(sourceFiles).flatMap(edgesOf);
}

/** The folders directly under `folder` (`functions` -> `functions/auth`, ...). */
export function subfolders(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => `${folder}/${entry.name}`)
    .sort();
}

/**
 * Every file and package `entry` loads when it runs, each with the chain of imports that reaches
 * it from `entry` (for a failure message that says where to cut). Files outside the source
 * folders (test/, bench/) are followed too.
 */
export function runtimeClosure(entry: string, graph: ImportEdge[]): Map<string, string[]> {
  const byFile = new Map<string, ImportEdge[]>();
  for (const edge of graph) byFile.set(edge.from, [...(byFile.get(edge.from) ?? []), edge]);
  const reached = new Map<string, string[]>([[entry, [entry]]]);
  const queue = [entry];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    const edges = byFile.get(file) ?? (SOURCE_FOLDERS.some((folder) => file.startsWith(`${folder}/`)) ? [] : edgesOf(file));
    for (const edge of edges) {
      if (reached.has(edge.to)) continue;
      reached.set(edge.to, [...(reached.get(file) ?? []), edge.to]);
      if (!edge.isPackage) queue.push(edge.to);
    }
  }
  return reached;
}
