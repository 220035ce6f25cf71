// Amounts the CRD pattern lets through but Kubernetes cannot hold (int64 bytes, or millicores), or
// a VM cannot boot with: refused at the input, naming file, document and field.
import { describe, expect, it } from 'vitest';
import { parseInputText } from '../../../src/inputs/parse.ts';
import { formatProblem } from '../../../src/inputs/problems.ts';
import { exceedsAmount, MAX_INT64, parseQuantity } from '../../../src/inputs/quantity.ts';

function template(environmentType: string, memory: string, disk = '10Gi'): string {
  return `apiVersion: crownlabs.polito.it/v1alpha2
kind: Template
metadata: {name: t, namespace: workspace-tea}
spec:
  prettyName: T
  description: d
  environmentList:
  - name: e
    image: x
    environmentType: ${environmentType}
    persistent: true
    resources: {cpu: 1, reservedCPUPercentage: 25, memory: "${memory}", disk: "${disk}"}
`;
}
const errors = (text: string) => parseInputText(text, 'lab.yaml').problems.map(formatProblem);

describe('quantities beyond what Kubernetes holds', () => {
  it('8Ei is exactly 2^63 bytes: Go clamps it to 2^63-1 silently, so it exceeds an int64; 7Ei and 2^63-1 do not', () => {
    expect(parseQuantity('8Ei').toString()).toBe('9223372036854775807'); // the clamp being guarded against
    expect(exceedsAmount('8Ei', MAX_INT64)).toBe(true);
    expect(exceedsAmount('99999999999999999999Gi', MAX_INT64)).toBe(true);
    expect(exceedsAmount('9223372036854775808', MAX_INT64)).toBe(true);
    expect(exceedsAmount('1e19', MAX_INT64)).toBe(true);
    expect(exceedsAmount('7Ei', MAX_INT64)).toBe(false);
    expect(exceedsAmount('9223372036854775807', MAX_INT64)).toBe(false);
    expect(exceedsAmount('8191.99Pi', MAX_INT64)).toBe(false);
    expect(exceedsAmount('-8Ei', MAX_INT64)).toBe(false);
    expect(exceedsAmount(2 ** 64, MAX_INT64)).toBe(true);
  });

  it('a Template memory or disk beyond int64 bytes is an error naming file, document and field', () => {
    expect(errors(template('Container', '99999999999999999999Gi'))).toEqual([
      'lab.yaml:12:60 (document 1, Template workspace-tea/t): error: spec.environmentList[0].resources.memory: "99999999999999999999Gi": more than Kubernetes can hold, at most 9223372036854775807 bytes (2^63-1)',
    ]);
    expect(errors(template('Container', '1Gi', '8Ei'))).toEqual([
      'lab.yaml:12:73 (document 1, Template workspace-tea/t): error: spec.environmentList[0].resources.disk: "8Ei": more than Kubernetes can hold, at most 9223372036854775807 bytes (2^63-1)',
    ]);
    expect(errors(template('Container', '7Ei'))).toEqual([]);
  });

  it("a VM's memory leaves room for KubeVirt's 500M overhead within int64", () => {
    expect(errors(template('VirtualMachine', '9223372036854775807'))).toEqual([
      expect.stringContaining('resources.memory: "9223372036854775807": more than Kubernetes can hold, at most 9223372036354775807 bytes (2^63-1 less KubeVirt\'s 500M overhead)'),
    ]);
    expect(errors(template('VirtualMachine', '9223372036354775807'))).toEqual([]);
  });

  it('a quota beyond int64 bytes, or CPU beyond int64 millicores, is an error', () => {
    const workspace = (cpu: string, memory: string) =>
      `apiVersion: crownlabs.polito.it/v1alpha1\nkind: Workspace\nmetadata: {name: tea}\nspec:\n  prettyName: Tea\n  quota: {cpu: "${cpu}", memory: "${memory}", instances: 1}\n`;
    expect(errors(workspace('1E', '1Gi'))).toEqual([
      'lab.yaml:6:16 (document 1, Workspace tea): error: spec.quota.cpu: "1E": more than Kubernetes can hold, at most 9223372036854775 cores (2^63-1 millicores)',
    ]);
    expect(errors(workspace('9223372036854775', '8Ei'))).toEqual([expect.stringContaining('spec.quota.memory: "8Ei": more than Kubernetes can hold')]);
  });
});

describe('a VM with no memory cannot boot', () => {
  it('VirtualMachine and CloudVM memory under 1M (0 bytes among them) is an error; a Container may have 0', () => {
    expect(errors(template('VirtualMachine', '0'))).toEqual([
      `lab.yaml:12:60 (document 1, Template workspace-tea/t): error: spec.environmentList[0].resources.memory: "0": a VM needs at least 1M of memory (KubeVirt's smallest; it cannot boot with less)`,
    ]);
    expect(errors(template('CloudVM', '999k'))).toEqual([expect.stringContaining('resources.memory: "999k": a VM needs at least 1M')]);
    expect(errors(template('VirtualMachine', '1M'))).toEqual([]);
    expect(errors(template('Container', '0'))).toEqual([]);
  });
});
