import { describe, expect, it } from 'vitest';
import { effectiveEnvironments, FROZEN_TEMPLATE_ANNOTATION, instanceOwnLabels, instanceUid } from '../../../src/model/instance-plan.ts';
import { canon, instanceChildName, myDrivePvcName, sandboxNamespaceName, tenantManageRoleName, tenantNamespaceName, workspaceNamespaceName } from '../../../src/model/naming.ts';
import { containerResources, virtualMachineResources } from '../../../src/model/resources.ts';
import { inventoryFrom, lab } from '../../support/lab.ts';

describe('§0.2 and §5.2 names', () => {
  it('canonicalises dots, except in workspace namespaces', () => {
    expect(canon('john.doe')).toBe('john-doe');
    expect(tenantNamespaceName('john.doe')).toBe('tenant-john-doe');
    expect(sandboxNamespaceName('john.doe')).toBe('sandbox-john-doe');
    expect(tenantManageRoleName('john.doe')).toBe('crownlabs-manage-tenant-john-doe');
    expect(myDrivePvcName('john.doe')).toBe('john-doe-drive');
    expect(workspaceNamespaceName('a.b')).toBe('workspace-a.b');
    expect(instanceChildName('green.tea')).toBe('green-tea');
    expect(instanceChildName('green.tea', 'ide')).toBe('green-tea-ide');
  });
});

describe('§7.4/§7.5 resource formulas', () => {
  it('VMs: requests cpu×pct×10m, limits cpu+500m, memory+500M both ways', () => {
    expect(virtualMachineResources({ cpu: 2, reservedCPUPercentage: 25, memory: '2G' })).toEqual({ requests: { cpu: '500m', memory: '2500M' }, limits: { cpu: '2500m', memory: '2500M' } });
    expect(virtualMachineResources({ cpu: 1, reservedCPUPercentage: 100, memory: '1Gi' })).toEqual({ requests: { cpu: '1', memory: '1573741824' }, limits: { cpu: '1500m', memory: '1573741824' } });
    expect(virtualMachineResources({ cpu: 3, reservedCPUPercentage: 33, memory: 2_000_000_000 })).toEqual({ requests: { cpu: '990m', memory: '2500M' }, limits: { cpu: '3500m', memory: '2500M' } });
  });
  it('containers: no overheads, canonical memory', () => {
    expect(containerResources({ cpu: 4, reservedCPUPercentage: 50, memory: '2048Mi' })).toEqual({ requests: { cpu: '2', memory: '2Gi' }, limits: { cpu: '4', memory: '2Gi' } });
  });
});

describe('§7.2 step 5 labels on the Instance', () => {
  it('merges managed-by, workspace, template, persistent and the termination watch label', () => {
    const inv = inventoryFrom(lab({ env: { environmentType: 'Container', persistent: true, resources: { cpu: 1, reservedCPUPercentage: 1, memory: '1G', disk: '1G' } }, instance: { customizationUrls: { statusCheck: 'https://x/check' } }, instanceMeta: { labels: { mine: 'kept' } } }));
    const instance = [...inv.instances.values()][0];
    expect(instanceOwnLabels(instance, inv.templateOf(instance)!, inv.level)).toEqual({
      mine: 'kept',
      'crownlabs.polito.it/managed-by': 'instance',
      'crownlabs.polito.it/workspace': 'tea',
      'crownlabs.polito.it/template': 'tmpl',
      'crownlabs.polito.it/persistent': 'true',
      'crownlabs.polito.it/watch-for-instance-termination': 'true',
    });
  });
});

describe('Decision 3: the frozen Template spec', () => {
  it('renders from the annotation when present, from the Template otherwise', () => {
    const frozen = [{ name: 'old', image: 'old:1', environmentType: 'Container', guiEnabled: true, disableControls: false, persistent: false, mode: 'Standard', rewriteURL: false, mountMyDriveVolume: false, resources: { cpu: 1, reservedCPUPercentage: 10, memory: '1G' } }];
    const inv = inventoryFrom(lab({ env: { environmentType: 'Container' }, instanceMeta: { annotations: { [FROZEN_TEMPLATE_ANNOTATION]: JSON.stringify({ environmentList: frozen }) } } }));
    const instance = [...inv.instances.values()][0];
    expect(effectiveEnvironments(instance, inv.templateOf(instance)!).map((e) => e.image)).toEqual(['old:1']);
    const live = inventoryFrom(lab({ env: { environmentType: 'Container' } }));
    const i2 = [...live.instances.values()][0];
    expect(effectiveEnvironments(i2, live.templateOf(i2)!).map((e) => e.image)).toEqual(['registry.example/img:1']);
  });
});

describe('UIDs of Instances read from files', () => {
  it('uses metadata.uid when present, else a stable name-based UUID', () => {
    const withUid = { metadata: { name: 'a', namespace: 'n', uid: 'u-1' } } as never;
    expect(instanceUid(withUid)).toBe('u-1');
    const a = instanceUid({ metadata: { name: 'a', namespace: 'n' } } as never);
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(instanceUid({ metadata: { name: 'a', namespace: 'n' } } as never)).toBe(a);
    expect(instanceUid({ metadata: { name: 'a', namespace: 'm' } } as never)).not.toBe(a);
  });
});
