// The controller takes over only what CrownLabs made (ours or the Go operators') or what an
// administrator marked for adoption; someone else's namespace named like a Tenant's is refused.
import { describe, expect, it } from 'vitest';
import { ADOPT_ANNOTATION, adoptionRefusal } from '../../../src/controller/adoption.ts';

const TARGET = 'crownlabs.polito.it/operator-selector';
const meta = (m: Record<string, unknown>) => ({ metadata: m });

describe('adoption of live objects a set renders', () => {
  it('refuses an object with none of our or upstream\'s marks, naming the opt-in annotation', () => {
    expect(adoptionRefusal(meta({}), TARGET)).toContain(`annotate the object ${ADOPT_ANNOTATION}="true"`);
    expect(adoptionRefusal(meta({ labels: { team: 'ops' }, annotations: { [ADOPT_ANNOTATION]: 'yes' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment' }] }), TARGET)).toBeDefined();
  });

  it('takes over ours, the Go operators\' (owner reference, CrownLabs or target label) and the opted-in', () => {
    expect(adoptionRefusal(meta({ labels: { 'app.kubernetes.io/managed-by': 'crownlabs-composer' } }), TARGET)).toBeUndefined();
    expect(adoptionRefusal(meta({ labels: { 'crownlabs.polito.it/managed-by': 'tenant' } }), TARGET)).toBeUndefined();
    expect(adoptionRefusal(meta({ labels: { 'crownlabs.polito.it/type': 'sandbox' } }), TARGET)).toBeUndefined();
    expect(adoptionRefusal(meta({ labels: { selector: 'prod' } }), 'selector')).toBeUndefined();
    expect(adoptionRefusal(meta({ ownerReferences: [{ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant' }] }), TARGET)).toBeUndefined();
    expect(adoptionRefusal(meta({ annotations: { [ADOPT_ANNOTATION]: 'true' } }), TARGET)).toBeUndefined();
  });
});
