import { describe, expect, it } from 'vitest';
import { diffProgram, report } from '../../../src/cli/diff.ts';
import { parseLabelSelector } from '../../../src/cli/label-selector.ts';
import { crownlabs, LAB } from '../../support/cli.ts';

describe('label selector (kubectl syntax)', () => {
  const l = { app: 'web', tier: 'front', n: '5' };
  it.each([
    ['', true],
    ['app=web', true],
    ['app==web', true],
    ['app!=web', false],
    ['app=db', false],
    ['missing!=x', true],
    ['app', true],
    ['!app', false],
    ['!missing', true],
    ['app in (db, web)', true],
    ['app notin (db,web)', false],
    ['missing notin (a)', true],
    ['app=web,tier=front', true],
    ['app=web, tier=back', false],
    ['n>4', true],
    ['n<5', false],
    ['example.com/key', false],
  ])('%s matches %s', (sel, expected) => {
    expect(parseLabelSelector(sel)(l)).toBe(expected);
  });

  it('does not take inherited properties for labels', () => {
    expect(parseLabelSelector('constructor')({})).toBe(false);
    expect(parseLabelSelector('toString=x')({})).toBe(false);
    expect(parseLabelSelector('!constructor')(undefined)).toBe(true);
  });

  it.each(['a in (b', 'a)', 'a=b=c', 'a,,b', '-a=b', 'a=b c', 'n<x', `a=${'v'.repeat(64)}`, 'Bad_Prefix/k'])('rejects %s', (sel) => {
    expect(() => parseLabelSelector(sel)).toThrow();
  });
});

describe('diffProgram', () => {
  it('is diff -u -N unless KUBECTL_EXTERNAL_DIFF says otherwise, keeping only plain arguments as kubectl does', () => {
    expect(diffProgram({})).toEqual({ command: 'diff', args: ['-u', '-N'] });
    expect(diffProgram({ KUBECTL_EXTERNAL_DIFF: 'colordiff -N -u --color=always $(rm) ;x /etc/passwd' })).toEqual({ command: 'colordiff', args: ['-N', '-u', '--color=always'] });
  });
});

describe('report', () => {
  it('gives each object a line, then its danger, takeover and changed fields (capped)', () => {
    const paths = Array.from({ length: 14 }, (_, i) => `spec.f${i}`);
    const text = report({
      changes: [
        { id: 'Deployment/ns/d', kind: 'Deployment', action: 'change', paths, takeover: ['instance-operator'], danger: 'restarts the workload (x)' },
        { id: 'Secret/ns/s', kind: 'Secret', action: 'prune', paths: [], takeover: [], note: 'owned by Instance/ns/i, no longer rendered' },
      ],
      errors: ['Service/ns/x: 422 bad'],
    });
    expect(text.split('\n')).toEqual([
      'changed Deployment/ns/d',
      '  DANGER: restarts the workload (x)',
      "  takeover from field manager 'instance-operator' (Update): crownlabs-composer becomes the manager of every field it renders",
      `  fields: ${paths.slice(0, 12).join(', ')}, … (2 more)`,
      'prune   Secret/ns/s (owned by Instance/ns/i, no longer rendered)',
      'error   Service/ns/x: 422 bad',
      '',
    ]);
  });
});

describe('crownlabs diff: usage and input errors exit 2 (as kubectl diff), with one line', () => {
  it('needs -f or --from-cluster, not both', () => {
    for (const args of [['diff'], ['diff', '-f', LAB, '--from-cluster']]) {
      const r = crownlabs(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe('crownlabs diff: give the inputs with -f PATH…, or --from-cluster (one of the two); see --help\n');
    }
  });
  it('rejects a bad selector or duration before reading anything', () => {
    const r = crownlabs(['diff', '--from-cluster', '-l', 'a in (b', '--kubeconfig', '/nonexistent']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('crownlabs diff: unbalanced "(" in selector "a in (b"\n');
    expect(crownlabs(['diff', '--from-cluster', '--tenant-ns-keep-alive', 'soon']).code).toBe(2);
  });
  it('reports input errors with file and exits 2, reading no cluster', () => {
    const r = crownlabs(['diff', '-f', 'test/fixtures/does-not-exist.yaml', '--kubeconfig', '/nonexistent']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('does-not-exist.yaml');
    expect(r.stderr).toMatch(/crownlabs diff: 1 input error\(s\): nothing compared\n$/);
  });
  it('says in one line when the kubeconfig cannot be read', () => {
    const r = crownlabs(['diff', '--from-cluster', '--kubeconfig', '/nonexistent/kubeconfig']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("crownlabs diff: kubeconfig: ENOENT: no such file or directory, open '/nonexistent/kubeconfig'\n");
  });
});
