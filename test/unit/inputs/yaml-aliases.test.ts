import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseInputText } from '../../../src/inputs/parse.ts';
import { formatProblem } from '../../../src/inputs/problems.ts';
import type { Template } from '../../../src/inputs/types.ts';
import { MAX_ALIAS_VALUES } from '../../../src/inputs/yaml-aliases.ts';
import { LabSession } from '../../../src/compose/incremental.ts';
import { defaultConfig, loadConfig } from '../../../src/config/config.ts';
import { crownlabs } from '../../support/cli.ts';

/**
 * A "billion laughs" Namespace: `levels` anchors, each a list of `width` aliases of the one
 * before; it expands to width^levels values. Line 5 holds &a0, line 5+k holds &ak.
 */
function bombNamespace(levels: number, width = 10): string {
  const lines = ['apiVersion: v1', 'kind: Namespace', 'metadata: {name: bomb}', 'spec:', `  a0: &a0 [${Array(width).fill('lol').join(', ')}]`];
  for (let k = 1; k < levels; k++) lines.push(`  a${k}: &a${k} [${Array(width).fill(`*a${k - 1}`).join(', ')}]`);
  return `${lines.join('\n')}\n`;
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'crownlabs-aliases-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('#14.12 alias expansion is capped, with file and line', () => {
  it('rejects a billion-laughs document at the alias that crosses the cap', () => {
    const { objects, problems } = parseInputText(bombNamespace(9), 'bomb.yaml');
    expect(objects).toEqual([]);
    // *a0…*a2 add 12,330 values, each *a3 11,111 more: the 8th *a3 (line 9, column 47) crosses 100,000.
    expect(problems.map(formatProblem)).toEqual([`bomb.yaml:9:47 (document 1): error: aliases expand this file by more than ${MAX_ALIAS_VALUES} values (an alias bomb?)`]);
  });

  it('the CLI exits 1 naming the file and line', { timeout: 120_000 }, () => {
    writeFileSync(join(dir, 'bomb.yaml'), bombNamespace(9));
    const r = crownlabs(['validate', '-f', join(dir, 'bomb.yaml')]);
    expect(r.stderr).toContain(`bomb.yaml:9:47 (document 1): error: aliases expand this file by more than ${MAX_ALIAS_VALUES} values`);
    expect(r.code).toBe(1);
  });

  it('watch mode reads through the same cap: load and update report the bomb and keep the last good state', () => {
    const file = join(dir, 'ns.yaml');
    writeFileSync(file, 'apiVersion: v1\nkind: Namespace\nmetadata: {name: fine}\n');
    const session = new LabSession([dir], defaultConfig(), dir);
    expect(session.load().applied).toBe(true);
    // 10^6 values: small enough that an uncapped reader still finishes here.
    writeFileSync(file, bombNamespace(6));
    const update = session.update([file]);
    expect(update.applied).toBe(false);
    expect(update.problems.map(formatProblem)).toEqual([`ns.yaml:9:47 (document 1): error: aliases expand this file by more than ${MAX_ALIAS_VALUES} values (an alias bomb?)`]);
    expect(new LabSession([dir], defaultConfig(), dir).load().applied).toBe(false);
  });

  it('finds anchors in every position YAML allows them, JSON-style flow included', () => {
    const fan = (alias: string) => Array(400).fill(alias).join(',');
    const forms = {
      block: `a: &a [${'x,'.repeat(399)}x]\nb: &b [${fan('*a')}]\nc: [${fan('*b')}]\n`,
      flowJson: `{"a":&a [${'"x",'.repeat(399)}"x"], "b":&b [${fan('*a')}], "c":[${fan('*b')}]}\n`,
      flowSeq: `[&a [${'x,'.repeat(399)}x], &b [${fan('*a')}], [${fan('*b')}]]\n`,
      tab: `a:\t&a [${'x,'.repeat(399)}x]\nb:\t&b [${fan('*a')}]\nc: [${fan('*b')}]\n`,
      bom: `\uFEFF&a [&b [${'x,'.repeat(399)}x], [${fan('*b')}], [${fan('*b')}]]\n`,
      comma: `[[x],&a [${'x,'.repeat(399)}x],&b [${fan('*a')}],[${fan('*b')}]]\n`,
    };
    for (const [form, text] of Object.entries(forms)) {
      const { problems } = parseInputText(text, 'f.yaml');
      expect(problems.map((p) => p.message).join('\n'), form).toMatch(/^aliases expand this file/);
    }
  });

  it('reports an unknown alias and an alias inside its own node at their line, not as an internal error', () => {
    const ns = (tail: string) => `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n${tail}`;
    expect(parseInputText(ns('  labels: *nope\n'), 'f.yaml').problems.map(formatProblem)).toEqual([
      'f.yaml:5:11 (document 1): error: unknown alias *nope (an anchor &nope must come before it)',
    ]);
    expect(parseInputText(ns('spec: &s {finalizers: *s}\n'), 'f.yaml').problems.map(formatProblem)).toEqual([
      'f.yaml:5:23 (document 1): error: alias *s is inside the node it names',
    ]);
  });

  it('expands ordinary aliases into separate values (defaults and positions per use)', () => {
    const text = `apiVersion: crownlabs.polito.it/v1alpha2
kind: Template
metadata: {name: t, namespace: workspace-w}
spec:
  prettyName: T
  description: d
  workspace.crownlabs.polito.it/WorkspaceRef: {name: w}
  environmentList:
    - name: a
      image: i
      environmentType: Container
      resources: &r {cpu: 1, reservedCPUPercentage: 10, memory: 1G}
    - name: b
      image: i
      environmentType: Container
      resources: *r
`;
    const { objects, problems } = parseInputText(text, 'f.yaml');
    expect(problems).toEqual([]);
    const [a, b] = (objects[0].object as Template).spec.environmentList;
    expect(b.resources).toEqual(a.resources);
    expect(b.resources).not.toBe(a.resources);
    const bad = parseInputText(text.replace('memory: 1G', 'memory: lots'), 'f.yaml').problems.map(formatProblem);
    expect(bad).toEqual([
      'f.yaml:12:65 (document 1, Template workspace-w/t): error: spec.environmentList[0].resources.memory: must be a Kubernetes quantity (an integer or a string such as 500m, 2, 4Gi)',
      'f.yaml:12:65 (document 1, Template workspace-w/t): error: spec.environmentList[1].resources.memory: must be a Kubernetes quantity (an integer or a string such as 500m, 2, 4Gi)',
    ]);
  });

  it('accepts many aliases while the values they add stay under the cap', () => {
    // Anchors are per document: one file of one List shares them.
    const list = `apiVersion: v1\nkind: List\nitems:\n${Array.from({ length: 2000 }, (_, i) => `- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: n${i}\n    labels: ${i === 0 ? '&l {a: b, c: d}' : '*l'}\n`).join('')}`;
    const { objects, problems } = parseInputText(list, 'list.yaml');
    expect(problems).toEqual([]);
    expect(objects).toHaveLength(2000);
    expect(objects[1999].object.metadata.labels).toEqual({ a: 'b', c: 'd' });
  });

  it('reports duplicate keys with file and line', () => {
    expect(parseInputText('apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  name: b\n', 'f.yaml').problems.map(formatProblem)).toEqual([
      'f.yaml:5:3 (document 1): error: malformed YAML: Map keys must be unique',
    ]);
  });
});

describe('#14.12 the --config file: aliases capped, errors at their line', () => {
  const config = (text: string) => {
    const file = join(dir, 'c.yaml');
    writeFileSync(file, text);
    return loadConfig({ file }).problems.map((p) => formatProblem({ ...p, file: 'c.yaml' }));
  };
  it('rejects an alias bomb and an unknown alias at their line', () => {
    const bomb = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let k = 1; k < 7; k++) bomb.push(`a${k}: &a${k} [${Array(10).fill(`*a${k - 1}`).join(', ')}]`);
    expect(config(`${bomb.join('\n')}\n`)).toEqual([`c.yaml:5:45: error: cannot read config: aliases expand this file by more than ${MAX_ALIAS_VALUES} values (an alias bomb?)`]);
    expect(config('capCpu: *x\n')).toEqual(['c.yaml:1:9: error: cannot read config: unknown alias *x (an anchor &x must come before it)']);
  });
  it('reports duplicate keys and bad values at their line', () => {
    expect(config('capCpu: "4"\ncapCpu: "5"\n')).toEqual(['c.yaml:2:1: error: cannot read config: Map keys must be unique']);
    expect(config('capMemory: 1Gi\ncapCpu: lots\n')).toEqual(['c.yaml:2:1: error: capCpu: must be a Kubernetes quantity (e.g. 25, 50G, 1Gi), not "lots"']);
  });
  it('still reads aliases within the cap', () => {
    const file = join(dir, 'c.yaml');
    writeFileSync(file, 'capCpu: &c "4"\nplatformControllerCpu: *c\n');
    const { config: c, problems } = loadConfig({ file });
    expect(problems).toEqual([]);
    expect(c.platformControllerCpu).toBe('4');
  });
});

describe('YAML merge keys are read as kubectl and upstream read them', () => {
  const template = (second: string) => `apiVersion: crownlabs.polito.it/v1alpha2
kind: Template
metadata: {name: t, namespace: workspace-tea}
spec:
  prettyName: T
  description: d
  environmentList:
  - &base
    name: e
    image: x
    environmentType: Container
    resources: {cpu: 1, reservedCPUPercentage: 25, memory: 1G}
${second}`;
  const envs = (text: string) => {
    const { objects, problems } = parseInputText(text, 't.yaml');
    expect(problems.map(formatProblem)).toEqual([]);
    return (objects[0].object as Template).spec.environmentList.map((e) => [e.name, e.image, e.environmentType, e.resources.memory]);
  };

  it('<<: *base adds the keys the mapping lacks; its own keys win', () => {
    expect(envs(template('  - <<: *base\n    name: f\n    image: y\n'))).toEqual([
      ['e', 'x', 'Container', '1G'],
      ['f', 'y', 'Container', '1G'],
    ]);
  });

  it('a list of aliases, and a mapping written in place (no anchor in the file), merge too', () => {
    expect(envs(template('  - <<: [*base]\n    name: f\n')).at(1)).toEqual(['f', 'x', 'Container', '1G']);
    const inline = template('').replace('  - &base\n', '  - <<: {image: z}\n');
    expect(envs(inline)).toEqual([['e', 'x', 'Container', '1G']]);
    expect(envs(template('').replace('    image: x\n', '    <<: {image: z}\n'))).toEqual([['e', 'z', 'Container', '1G']]);
  });

  it('a merge key given a scalar is an error at its line; a quoted "<<" is an ordinary (unknown) key', () => {
    expect(parseInputText(template('  - <<: x\n    name: f\n'), 't.yaml').problems.map(formatProblem)).toEqual([
      't.yaml:13:5 (document 1): error: a merge key (<<) takes a mapping, an alias of one or a list of them',
    ]);
    const quoted = parseInputText(template('  - "<<": *base\n    name: f\n'), 't.yaml').problems.map(formatProblem);
    expect(quoted).toContainEqual(expect.stringMatching(/error: spec\.environmentList\[1\]\["<<"\]: unknown field$/));
  });
});
