/**
 * Upstream's forge cases (operators/pkg/forge/*_test.go at e62be9e, and at 2e8aeb9 where the same
 * case exists there), restated as rows over our model: names, labels, node selection, resources and
 * the tenant quota. Each row names the upstream Describe/When/Entry it restates; the inputs are
 * upstream's, the expectations what that case asserts. What the rendered objects carry is in
 * test/unit/constructs/forge-upstream-cases.test.ts.
 *
 * Not restated here: names of per-environment children and the `crownlabs.polito.it/environment`
 * label (being changed at e62be9e), MyDrive/SharedVolume mirror PVC names (`LastCharsOf`, out of
 * scope), and `MapFromKVString` (LoadBalancer annotations, public exposure).
 */
import { describe, expect, it } from 'vitest';
import type { ApiLevel } from '../../../src/inputs/api-level.ts';
import type { Environment, EnvironmentResources, Instance, Template, Tenant, Workspace } from '../../../src/inputs/types.ts';
import { SUBMISSION_COMPLETED_LABELS, SUBMISSION_SKIPPED_LABELS, terminationLabels } from '../../../src/model/automation.ts';
import { instanceObjectLabels, instanceSelectorLabels, LABEL } from '../../../src/model/labels.ts';
import { instanceOwnLabels, nodeSelectorOf } from '../../../src/model/instance-plan.ts';
import {
  canon,
  instanceChildName,
  myDrivePvcName,
  tenantManageRoleName,
  tenantNamespaceName,
  workspaceGroupName,
  workspaceNamespaceName,
  workspaceRoleDescription,
  workspaceRoleName,
} from '../../../src/model/naming.ts';
import { containerResources, virtualMachineResources } from '../../../src/model/resources.ts';
import { cleanName, tenantQuota } from '../../../src/model/tenant-plan.ts';

const BOTH: readonly ApiLevel[] = ['2e8aeb9', 'e62be9e'];

describe('upstream utils_test "ObjectMeta" / "ObjectMetaWithSuffix": names of Instance objects', () => {
  // Which objects take a suffix is the per-environment naming, not restated here; the form is.
  it.each([
    ['When the instance name does not contain dots', 'kubernetes-1234', 'kubernetes-1234', 'kubernetes-1234-prime'],
    ['When the instance name does contain dots', 'kuber.netes.1234', 'kuber-netes-1234', 'kuber-netes-1234-prime'],
  ])('%s', (_entry, name, plain, suffixed) => {
    expect(canon(name)).toBe(plain);
    expect(instanceChildName(name)).toBe(plain);
    expect(instanceChildName(name, 'prime')).toBe(suffixed);
  });
});

describe('upstream namespace_test, rbac_test, storage_test, keycloak_test: names derived from Tenants and Workspaces', () => {
  it.each([
    // namespace_test "GetTenantNamespaceName"
    ['tenant namespace, simple name', () => tenantNamespaceName('student'), 'tenant-student'],
    ['tenant namespace, dots become dashes', () => tenantNamespaceName('s123456.student'), 'tenant-s123456-student'],
    // namespace_test "The forge.GetWorkspaceNamespaceName function"
    ['workspace namespace', () => workspaceNamespaceName('test-workspace'), 'workspace-test-workspace'],
    // rbac_test "The forge.GetTenantClusterRoleResourceName function"
    ['tenant cluster role', () => tenantManageRoleName('test-tenant'), 'crownlabs-manage-tenant-test-tenant'],
    // storage_test "GetMyDrivePVCName"
    ['MyDrive PVC, without dots', () => myDrivePvcName('student'), 'student-drive'],
    ['MyDrive PVC, with dots', () => myDrivePvcName('s123456.student'), 's123456-student-drive'],
    // keycloak_test "WorkspaceRoleName" / "GetWorkspaceManagerRoleName" / "GetWorkspaceUserRoleName"
    ['manager role', () => workspaceRoleName('test-workspace', 'manager'), 'workspace-test-workspace:manager'],
    ['user role', () => workspaceRoleName('test-workspace', 'user'), 'workspace-test-workspace:user'],
    // rbac_test / rolebinding_test: the subjects of the workspace bindings
    ['manager group', () => workspaceGroupName('test-workspace', 'manager'), 'kubernetes:workspace-test-workspace:manager'],
    ['user group', () => workspaceGroupName('test-workspace', 'user'), 'kubernetes:workspace-test-workspace:user'],
  ])('%s', (_case, derive, expected) => {
    expect(derive()).toBe(expected);
  });

  it.each([
    // keycloak_test "GetWorkspaceManagerRoleDescription" / "GetWorkspaceUserRoleDescription" (e62be9e)
    ['manager', 'e62be9e', 'Test Workspace Manager Role'],
    ['user', 'e62be9e', 'Test Workspace User Role'],
    // 2e8aeb9's workspace controller describes both by the pretty name
    ['manager', '2e8aeb9', 'Test Workspace'],
    ['user', '2e8aeb9', 'Test Workspace'],
  ] as const)('Keycloak %s role description at %s', (role, level, expected) => {
    expect(workspaceRoleDescription('Test Workspace', role, level)).toBe(expected);
  });

  it('tenant_test "GetWorkspaceTargetLabel": the workspace label key keeps the name as it is', () => {
    for (const [ws, key] of [
      ['test-workspace', 'crownlabs.polito.it/workspace-test-workspace'],
      ['test.workspace-123', 'crownlabs.polito.it/workspace-test.workspace-123'],
      ['netgroup', 'crownlabs.polito.it/workspace-netgroup'],
    ]) {
      expect(`${LABEL.workspacePrefix}${ws}`).toBe(key);
    }
  });
});

describe('upstream tenant_test "CleanTenantName": first and last name labels', () => {
  it.each([
    ['Should replace spaces with underscores', 'John Doe', 'John_Doe'],
    ['Should remove special characters', 'John!@#$%^&*()Doe', 'JohnDoe'],
    ['Should trim leading and trailing underscores', '_JohnDoe_', 'JohnDoe'],
    ['Should handle combined cases', '__John @#$ Doe__', 'John__Doe'],
  ])('%s', (_it, name, expected) => {
    expect(cleanName(name)).toBe(expected);
  });
});

// --- Instance labels -------------------------------------------------------------------------

const template = (environmentList: Partial<Environment>[] = [], nodeSelector?: Record<string, string>): Template =>
  ({
    metadata: { name: 'kubernetes', namespace: 'workspace-netgroup' },
    spec: { 'workspace.crownlabs.polito.it/WorkspaceRef': { name: 'netgroup' }, environmentList, ...(nodeSelector ? { nodeSelector } : {}) },
  }) as unknown as Template;
const instance = (labels?: Record<string, string>, spec: Partial<Instance['spec']> = {}): Instance =>
  ({ metadata: { name: 'kubernetes-0000', namespace: 'tenant-tester', ...(labels ? { labels } : {}) }, spec }) as unknown as Instance;

describe('upstream labels_test "The forge.InstanceLabels function": the labels kept on the Instance', () => {
  const own = (level: ApiLevel) => ({
    'crownlabs.polito.it/managed-by': 'instance',
    'crownlabs.polito.it/workspace': 'netgroup',
    'crownlabs.polito.it/template': 'kubernetes',
    'crownlabs.polito.it/persistent': 'false',
    // Upstream added has-node-selector after 2e8aeb9.
    ...(level === 'e62be9e' ? { 'crownlabs.polito.it/has-node-selector': 'false' } : {}),
  });
  const rows: [entry: string, input: Record<string, string> | undefined, extra: Record<string, string>][] = [
    ['When the input labels map is nil', undefined, {}],
    ['When the input labels map already contains the expected values', { ...own('e62be9e'), 'user/key': 'user/value' }, { 'user/key': 'user/value' }],
    ['When the input labels map contains only part of the expected values', { 'crownlabs.polito.it/workspace': 'netgroup', 'user/key': 'user/value' }, { 'user/key': 'user/value' }],
  ];
  it.each(rows)('%s (e62be9e)', (_entry, input, extra) => {
    expect(instanceOwnLabels(instance(input), template(), 'e62be9e')).toEqual({ ...own('e62be9e'), ...extra });
  });
  it.each(rows.filter(([, input]) => !input?.[LABEL.hasNodeSelector]))('%s (2e8aeb9)', (_entry, input, extra) => {
    expect(instanceOwnLabels(instance(input), template(), '2e8aeb9')).toEqual({ ...own('2e8aeb9'), ...extra });
  });

  it('Checking side effects: the Instance’s own labels are not modified', () => {
    const labels = { 'crownlabs.polito.it/managed-by': 'whatever' };
    for (const level of BOTH) instanceOwnLabels(instance(labels), template(), level);
    expect(labels).toEqual({ 'crownlabs.polito.it/managed-by': 'whatever' });
  });

  it.each([
    ['When a single, non-persistent environment is present', [false], 'false'],
    ['When multiple, non-persistent environments are present', [false, false], 'false'],
    ['When a single, persistent environment is present', [true], 'true'],
    ['When multiple, persistent environments are present', [true, true], 'true'],
    ['When multiple, mixed environments are present', [false, true, false], 'true'],
  ])('persistent label: %s', (_entry, persistent, expected) => {
    for (const level of BOTH) {
      const labels = instanceOwnLabels(instance(), template(persistent.map((p) => ({ persistent: p }))), level);
      expect(labels[LABEL.persistent]).toBe(expected);
    }
  });

  // e62be9e only: 2e8aeb9 has neither the label nor nodeSelector fields.
  it.each([
    ['the node selector of the environment and the instance are present and different', { key1: 'val1' }, { key2: 'val2' }, 'true'],
    ['the node selector of the environment and the instance are present and equal', { key: 'val' }, { key: 'val' }, 'true'],
    ['the node selector of the environment is empty and the node selector of the instance is present', {}, { key: 'val' }, 'true'],
    ['the node selector of the environment is present and the node selector of the instance is empty', { key: 'val' }, {}, 'true'],
    ['the node selector of the environment is present and the node selector of the instance is nil', { key: 'val' }, undefined, 'true'],
    ['the node selector of the environment is nil and the node selector of the instance is present', undefined, { key: 'val' }, 'false'],
    ['the node selector of the environment is empty and the node selector of the instance is nil', {}, undefined, 'false'],
    ['the node selector of the environment and the node selector of the instance are empty', {}, {}, 'false'],
    ['the node selector of the environment and the node selector of the instance are nil', undefined, undefined, 'false'],
  ] as const)('has-node-selector label: When %s', (_entry, fromTemplate, fromInstance, expected) => {
    const labels = instanceOwnLabels(instance(undefined, { nodeSelector: fromInstance }), template([], fromTemplate), 'e62be9e');
    expect(labels[LABEL.hasNodeSelector]).toBe(expected);
  });

  // The URL is statusCheckUrl at e62be9e, customizationUrls.statusCheck at 2e8aeb9 (same case at both).
  const withCheck = (level: ApiLevel, url: string): Partial<Instance['spec']> =>
    level === 'e62be9e' ? { statusCheckUrl: url } : ({ customizationUrls: { statusCheck: url } } as Partial<Instance['spec']>);
  it.each([
    ['When the Instance customizationUrls statusCheck is not set', {}, '', undefined],
    ['When the Instance customizationUrls statusCheck is set', {}, 'https://some/url', 'true'],
    ['When the Instance termination label was already set', { [LABEL.watchForInstanceTermination]: 'false' }, 'https://some/url', 'false'],
  ])('termination label: %s', (_entry, labels, url, expected) => {
    for (const level of BOTH) {
      const spec = url ? withCheck(level, url) : {};
      expect(instanceOwnLabels(instance(labels, spec), template(), level)[LABEL.watchForInstanceTermination]).toBe(expected);
    }
  });
});

describe('upstream labels_test "InstanceObjectLabels" / "InstanceSelectorLabels": labels of the Instance’s objects', () => {
  // The Instance-wide sets (the cloud-init Secret's, the submission Job's base); per-environment
  // objects add the environment label at e62be9e, which is not restated here.
  const id = { instanceName: 'kubernetes-0000', templateName: 'kubernetes', tenantName: 'tester' };
  it('object labels: managed-by instance plus instance, template and tenant', () => {
    expect(instanceObjectLabels(id)).toEqual({
      'crownlabs.polito.it/managed-by': 'instance',
      'crownlabs.polito.it/instance': 'kubernetes-0000',
      'crownlabs.polito.it/template': 'kubernetes',
      'crownlabs.polito.it/tenant': 'tester',
    });
  });
  it('selector labels: instance, template and tenant, a subset of the object labels', () => {
    const selector = instanceSelectorLabels(id);
    expect(selector).toEqual({ 'crownlabs.polito.it/instance': 'kubernetes-0000', 'crownlabs.polito.it/template': 'kubernetes', 'crownlabs.polito.it/tenant': 'tester' });
    expect(instanceObjectLabels(id)).toMatchObject(selector);
  });
});

describe('upstream labels_test "InstanceAutomationLabelsOnTermination" / "…OnSubmission": labels the automation writes', () => {
  // Upstream e62be9e also writes `crownlabs.polito.it/environment-name: <env>` with each of these
  // (its automation works per environment); ours acts on the single environment and writes only these.
  it.each([
    ['When the submission is needed', true, { [LABEL.watchForInstanceTermination]: 'false', [LABEL.instanceSubmissionRequested]: 'true' }],
    ['When the submission is not needed', false, { [LABEL.watchForInstanceTermination]: 'false', [LABEL.instanceSubmissionRequested]: 'false' }],
  ])('termination: %s', (_entry, submission, expected) => {
    expect(terminationLabels(submission)).toEqual(expected);
  });
  it.each([
    ['When the submission is successful', SUBMISSION_COMPLETED_LABELS, 'true'],
    ['When the submission is not successful (withdrawn)', SUBMISSION_SKIPPED_LABELS, 'false'],
  ])('submission: %s', (_entry, labels, completed) => {
    expect(labels).toEqual({ [LABEL.instanceSubmissionRequested]: 'false', [LABEL.instanceSubmissionCompleted]: completed });
  });
});

describe('upstream containers_test "The forge.NodeSelectorLabels function": the node labels workloads are scheduled by', () => {
  // Upstream returns {} or nil for "none"; an empty selector is not written either way.
  it.each([
    ['TemplateLabelSelector is nil, InstanceLabelSelector is nil (feature disabled)', undefined, undefined, undefined],
    ['TemplateLabelSelector is nil, InstanceLabelSelector is present (feature disabled)', undefined, { key: 'value' }, undefined],
    ['TemplateLabelSelector is empty and InstanceLabelSelector is nil', {}, undefined, undefined],
    ['TemplateLabelSelector is empty and InstanceLabelSelector is present: the instance labels', {}, { key: 'value' }, { key: 'value' }],
    ['both present: the template labels', { templateKey: 'templateValue' }, { instanceKey: 'instanceValue' }, { templateKey: 'templateValue' }],
  ])('%s', (_entry, fromTemplate, fromInstance, expected) => {
    expect(nodeSelectorOf(instance(undefined, { nodeSelector: fromInstance }), template([], fromTemplate))).toEqual(expected);
  });
});

// --- Resources --------------------------------------------------------------------------------

/** Upstream's environment: 2 cores, 25% reserved, 1250M of memory, 20Gi of disk. */
const RESOURCES: EnvironmentResources = { cpu: 2, reservedCPUPercentage: 25, memory: '1250M', disk: '20Gi' };

describe('upstream virtualmachines_test "The forge.VirtualMachineResources functions": VM requests and limits', () => {
  it('CPU requests 500m, CPU limits 2500m (with the hypervisor overhead), memory 1750M both ways', () => {
    expect(virtualMachineResources(RESOURCES)).toEqual({ requests: { cpu: '500m', memory: '1750M' }, limits: { cpu: '2500m', memory: '1750M' } });
  });
  it('e62be9e: extended resources are requested and limited as the environment names them', () => {
    // The VM counterpart of containers_test "the environment includes extended resources" (same forge code path).
    const res = virtualMachineResources({ ...RESOURCES, otherResources: { 'nvidia.com/gpu': '1' } });
    expect(res.extended).toEqual({ 'nvidia.com/gpu': '1' });
  });
});

describe('upstream containers_test "The forge.SetContainerResourcesFromEnvironment function": container requests and limits', () => {
  it('CPU requests 500m, CPU limits 2 cores, memory as given both ways', () => {
    expect(containerResources(RESOURCES)).toEqual({ requests: { cpu: '500m', memory: '1250M' }, limits: { cpu: '2', memory: '1250M' } });
  });
  it('When the environment includes extended resources: they go to requests and limits', () => {
    expect(containerResources({ ...RESOURCES, otherResources: { 'nvidia.com/gpu': 1 } }).extended).toEqual({ 'nvidia.com/gpu': '1' });
  });
  it('none named, none added (always so at 2e8aeb9, which has no otherResources)', () => {
    expect(containerResources(RESOURCES)).not.toHaveProperty('extended');
    expect(containerResources({ ...RESOURCES, otherResources: {} })).not.toHaveProperty('extended');
  });
});

// --- Tenant quota -----------------------------------------------------------------------------

const workspace = (quota: Record<string, unknown>): Workspace => ({ spec: { quota } }) as unknown as Workspace;
const NO_CAPS = { capCpu: '0', capMemory: '0', capInstances: 0 };

describe('upstream resourcequota_test "The forge.TenantResourceList function" (e62be9e): the summed quota', () => {
  it('with only the personal workspace: its quota as it is (caps off)', () => {
    const tenant = { spec: { personalWorkspace: { cpu: 25, memory: '50G', otherResources: {}, instances: 6 } } } as unknown as Tenant;
    expect(tenantQuota(tenant, [], NO_CAPS, 'e62be9e')).toEqual({ cpu: '25', memory: '50G', instances: 6, storage: '0', other: {} });
  });

  describe('with sample workspaces (10 + 20 cores, 15G + 25G, 2 + 3 instances, 1 + 2 GPUs; caps 25 cores, 40G, 5 instances)', () => {
    const workspaces = [
      workspace({ cpu: 10, memory: '15G', otherResources: { 'nvidia.com/gpu': 1 }, instances: 2 }),
      workspace({ cpu: 20, memory: '25G', otherResources: { 'nvidia.com/gpu': 2 }, instances: 3 }),
    ];
    const quota = tenantQuota({ spec: {} } as unknown as Tenant, workspaces, { capCpu: '25', capMemory: '40G', capInstances: 5 }, 'e62be9e');
    it.each([
      ['CPU equal to the cap, because the sum exceeds it', quota.cpu, '25'],
      ['memory equal to the sum (which reaches the cap)', quota.memory, '40G'],
      ['instances equal to the sum (which reaches the cap)', quota.instances, 5],
      ['the extended resource quotas merged', quota.other, { 'nvidia.com/gpu': '3' }],
    ])('%s', (_it, actual, expected) => {
      expect(actual).toEqual(expected);
    });
  });
});

describe('upstream resourcequota_test (2e8aeb9): the tenant quota', () => {
  // 2e8aeb9's spec.quota replaces the sum; otherwise the workspaces are summed and capped.
  it('It should forge tenant resource quota by overriding from the tenant spec', () => {
    const tenant = { spec: { quota: { cpu: '25', memory: '50G', instances: 6 } } } as unknown as Tenant;
    expect(tenantQuota(tenant, [], { capCpu: '25', capMemory: '50G', capInstances: 10 }, '2e8aeb9')).toEqual({ cpu: '25', memory: '50G', instances: 6 });
  });
  it('sample workspaces: CPU capped, memory and instances summed', () => {
    const workspaces = [workspace({ cpu: '10', memory: '15G', instances: 2 }), workspace({ cpu: '20', memory: '25G', instances: 3 })];
    expect(tenantQuota({ spec: {} } as unknown as Tenant, workspaces, { capCpu: '25', capMemory: '50G', capInstances: 10 }, '2e8aeb9')).toEqual({ cpu: '25', memory: '40G', instances: 5 });
  });
});
