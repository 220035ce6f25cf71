// One broken file must not bury its error under the "not found" errors it causes: references to
// what the broken text seems to define are left out, and its error says how many.
import { describe, expect, it } from 'vitest';
import { inventoryFromInput } from '../../../src/inputs/load.ts';
import { parseInputText } from '../../../src/inputs/parse.ts';
import { formatProblem } from '../../../src/inputs/problems.ts';

function load(files: Record<string, string>): string[] {
  const parsed = Object.entries(files).map(([name, text]) => parseInputText(text, name));
  return inventoryFromInput(
    parsed.flatMap((p) => p.objects),
    parsed.flatMap((p) => p.problems),
  ).problems.filter((p) => p.severity === 'error').map(formatProblem);
}

const TEMPLATE = `apiVersion: crownlabs.polito.it/v1alpha2
kind: Template
metadata:
  name: espresso
  namespace: workspace-coffee
spec:
  prettyName: Espresso
  description: d
  environmentList:
  - name: env
    image: x
    environmentType: Container
    resources: {cpu: 1, reservedCPUPercentage: 25, memory: 1G}
`;
const TENANT = `apiVersion: crownlabs.polito.it/v1alpha2
kind: Tenant
metadata: {name: john.doe}
spec: {firstName: John, lastName: Doe, email: john@example.com}
`;
const instance = (name: string, template: string) => `---
apiVersion: crownlabs.polito.it/v1alpha2
kind: Instance
metadata: {name: ${name}, namespace: tenant-john-doe}
spec:
  template.crownlabs.polito.it/TemplateRef: {name: ${template}, namespace: workspace-coffee}
  tenant.crownlabs.polito.it/TenantRef: {name: john.doe}
`;
const withTabs = TEMPLATE.replace(/\n {2}/g, '\n\t');

describe('problems that follow from a file that does not parse', () => {
  it('a tab-indented Template is one error, counting the Instances that name it instead of listing them', () => {
    const errors = load({ 'templates.yaml': withTabs, 'tenants.yaml': TENANT, 'instances.yaml': instance('a', 'espresso') + instance('b', 'espresso') });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^templates\.yaml:4:1 \(document 1\): error: malformed YAML: Tabs are not allowed as indentation \(\d+ more YAML errors in this document may follow from it\) \(2 more problems may follow from this, not listed: references to Template workspace-coffee\/espresso, not found, which the text that could not be read may define\)$/);
  });

  it('a reference to a name the broken text does not hold is still reported', () => {
    const errors = load({ 'templates.yaml': withTabs, 'tenants.yaml': TENANT, 'instances.yaml': instance('a', 'latte') });
    expect(errors).toEqual([
      expect.stringMatching(/^templates\.yaml:4:1 \(document 1\): error: malformed YAML: Tabs are not allowed as indentation \(\d+ more YAML errors in this document may follow from it\)$/),
      'instances.yaml:6:52 (document 1, Instance tenant-john-doe/a): error: spec["template.crownlabs.polito.it/TemplateRef"]: Template workspace-coffee/latte not found',
    ]);
  });

  it('with the file fixed, the same lab reads without errors (the references were only dangling because of it)', () => {
    expect(load({ 'templates.yaml': TEMPLATE, 'tenants.yaml': TENANT, 'instances.yaml': instance('a', 'espresso') })).toEqual([]);
  });

  it('a reference to a Tenant refused with an error of its own is not reported again', () => {
    const errors = load({ 'templates.yaml': TEMPLATE, 'tenants.yaml': TENANT.replace('email: john@example.com', 'email: 7'), 'instances.yaml': instance('a', 'espresso') });
    expect(errors).toEqual([expect.stringMatching(/^tenants\.yaml:4:\d+ \(document 1, Tenant john\.doe\): error: spec\.email: /)]);
  });
});

describe('what is not a read failure', () => {
  it('a document that parses but is no object hides no reference', () => {
    const errors = load({ 'list.yaml': '- a\n- b\n', 'tenants.yaml': TENANT, 'instances.yaml': instance('a', 'latte') });
    expect(errors).toEqual([
      'list.yaml:1:1 (document 1): error: a document must be a Kubernetes object (a mapping)',
      expect.stringContaining('Template workspace-coffee/latte not found'),
    ]);
  });
});
