import type { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { LABEL } from '../../src/model/labels.ts';
import { bypassGroupsCondition, celList, denyingPolicy } from './admission-exemptions.ts';

export interface SandboxAdmissionPoliciesProps {
  /**
   * Hosts of the lab (docs/behaviour.md §5.5): no sandbox Ingress may claim one of them, a name under
   * one, or a wildcard covering one.
   */
  readonly labHosts: readonly string[];
  /**
   * Groups whose requests are not checked (cluster administrators).
   * @default ['system:masters']
   */
  readonly bypassGroups?: readonly string[];
  /**
   * Prefix of the policies' and bindings' names (`<prefix>-services`, `<prefix>-ingresses`).
   * @default `crownlabs-sandbox`
   */
  readonly namePrefix?: string;
  /**
   * Labels of every object.
   * @default none
   */
  readonly labels?: Record<string, string>;
}

/** The labels every sandbox namespace carries (constructs/tenant/sandbox.ts). */
export const SANDBOX_NAMESPACE_SELECTOR = { matchLabels: { [LABEL.type]: 'sandbox' } };

/**
 * ingress-nginx annotations that make the trusted ingress controller send requests to a URL of the
 * author's choosing (auth subrequests, mirrors) or take raw nginx configuration (snippets, which may
 * `proxy_pass` anywhere): from a sandbox, each reaches other tenants' pods past their proxies.
 */
export const SANDBOX_REFUSED_INGRESS_ANNOTATIONS = [
  'nginx.ingress.kubernetes.io/auth-url',
  'nginx.ingress.kubernetes.io/mirror-target',
  'nginx.ingress.kubernetes.io/configuration-snippet',
  'nginx.ingress.kubernetes.io/server-snippet',
  'nginx.ingress.kubernetes.io/auth-snippet',
  'nginx.ingress.kubernetes.io/stream-snippet',
  'nginx.ingress.kubernetes.io/modsecurity-snippet',
] as const;


/**
 * What a sandbox may not create though its role allows Services and Ingresses (docs/behaviour.md §5.5):
 * ways to relay the trusted ingress controller, or a node's kube-proxy, to what another tenant or the
 * lab serves.
 *
 * - Services: no `type: ExternalName` (ingress-nginx follows the name, another tenant's Service DNS name
 *   included) and no `externalIPs` (kube-proxy would capture traffic to those addresses, cluster-wide).
 * - Ingresses: no rule for a lab host, a name under it or a wildcard covering it (it would take students'
 *   traffic, or the auth and OIDC requests of the lab); no rule without a host nor a `defaultBackend`
 *   (both answer every host no other Ingress serves, an unused lab host included); none of the annotations
 *   of SANDBOX_REFUSED_INGRESS_ANNOTATIONS.
 *
 * ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1) checked in process by the API server, scoped
 * to sandbox namespaces by their labels, as FrozenTemplatePolicy.
 */
export class SandboxAdmissionPolicies extends Construct {
  readonly objects: ApiObject[] = [];

  constructor(scope: Construct, id: string, props: SandboxAdmissionPoliciesProps) {
    super(scope, id);
    const prefix = props.namePrefix ?? 'crownlabs-sandbox';
    const hosts = celList([...new Set(props.labHosts)].sort());
    const policy = (suffix: string, rule: { apiGroups: string[]; resources: string[] }, variables: { name: string; expression: string }[], validations: { expression: string; message: string }[]) => {
      const { policy, binding } = denyingPolicy(this, { policy: suffix, binding: `${suffix}-binding` }, `${prefix}-${suffix}`, props.labels, {
        matchConstraints: {
          namespaceSelector: SANDBOX_NAMESPACE_SELECTOR,
          resourceRules: [{ ...rule, apiVersions: ['*'], operations: ['CREATE', 'UPDATE'] }],
        },
        matchConditions: [bypassGroupsCondition(props.bypassGroups)],
        ...(variables.length ? { variables } : {}),
        validations: validations.map((v) => ({ ...v, reason: 'Forbidden' })),
      });
      this.objects.push(policy, binding);
    };

    policy('services', { apiGroups: [''], resources: ['services'] }, [], [
      { expression: "!has(object.spec.type) || object.spec.type != 'ExternalName'", message: 'a sandbox Service may not be of type ExternalName' },
      { expression: '!has(object.spec.externalIPs) || size(object.spec.externalIPs) == 0', message: 'a sandbox Service may not set externalIPs' },
    ]);

    // A host is the lab's when it is one, is under one, or is a wildcard whose domain is one or above one.
    const labHost = (h: string) =>
      `(${h} in variables.lab || variables.lab.exists(l, ${h}.endsWith('.' + l)) || ` +
      `(${h}.startsWith('*.') && variables.lab.exists(l, l == ${h}.substring(2) || l.endsWith('.' + ${h}.substring(2)))))`;
    const annotations = celList(SANDBOX_REFUSED_INGRESS_ANNOTATIONS);
    policy(
      'ingresses',
      { apiGroups: ['networking.k8s.io'], resources: ['ingresses'] },
      [
        { name: 'lab', expression: hosts },
        { name: 'rules', expression: 'has(object.spec.rules) ? object.spec.rules : []' },
      ],
      [
        { expression: `variables.rules.all(r, !has(r.host) || !${labHost('r.host')})`, message: `a sandbox Ingress may not claim a host of the lab (${[...new Set(props.labHosts)].sort().join(', ')}), a name under one or a wildcard covering one` },
        { expression: 'variables.rules.all(r, has(r.host)) && !has(object.spec.defaultBackend)', message: 'a sandbox Ingress needs a host in every rule and no defaultBackend (they would answer every host no other Ingress serves)' },
        { expression: `!has(object.metadata.annotations) || !${annotations}.exists(a, a in object.metadata.annotations)`, message: `a sandbox Ingress may not set ${SANDBOX_REFUSED_INGRESS_ANNOTATIONS.join(', ')}` },
      ],
    );
  }
}
