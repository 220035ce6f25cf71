// cdk8s users read a construct's props from its JSDoc: every optional prop says, with @default,
// what happens when it is left out (issue 18 item 7).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');

/** `Interface.prop` of every optional member of an exported `…Props` interface that has no `@default` tag. */
function undocumentedOptionalProps(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  for (const stmt of source.statements) {
    if (!ts.isInterfaceDeclaration(stmt) || !stmt.name.text.endsWith('Props')) continue;
    for (const member of stmt.members) {
      if (!ts.isPropertySignature(member) || !member.questionToken) continue;
      const tags = ts.getJSDocTags(member).map((t) => t.tagName.text);
      if (!tags.includes('default')) out.push(`${stmt.name.text}.${member.name.getText(source)}`);
    }
  }
  return out;
}

function constructFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? constructFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

describe('construct props', () => {
  const files = constructFiles(join(ROOT, 'constructs'));

  it('every optional prop of every construct under constructs/ has a @default', () => {
    const missing = files.flatMap((f) => undocumentedOptionalProps(f, readFileSync(f, 'utf8')).map((p) => `${relative(ROOT, f)}: ${p}`));
    expect(missing).toEqual([]);
  });

  it('the check reads the tag, not the words', () => {
    const text = [
      'export interface FooProps {',
      '  /** Default 1. */',
      '  readonly a?: number;',
      '  /**',
      '   * Replicas.',
      '   * @default 1',
      '   */',
      '  readonly b?: number;',
      '  readonly c: string;',
      '}',
      'interface Wire { d?: string }',
    ].join('\n');
    expect(undocumentedOptionalProps('x.ts', text)).toEqual(['FooProps.a']);
  });
});
