import { ApiObject } from 'cdk8s';
import type { Construct } from 'constructs';

/** What every install policy that exempts the controller takes. */
export interface ControllerPolicyProps {
  /** The controller's ServiceAccount(s), `system:serviceaccount:<ns>:<name>`: not checked. */
  readonly writers: readonly string[];
  /**
   * Groups whose requests are not checked (cluster administrators, a backup restore).
   * @default ['system:masters']
   */
  readonly bypassGroups?: readonly string[];
  /**
   * Name of the policy and of its binding.
   * @default the policy's own (`crownlabs-instance-…`)
   */
  readonly name?: string;
  /**
   * Labels of both objects.
   * @default none
   */
  readonly labels?: Record<string, string>;
}

/** CEL list literal of strings. */
export function celList(xs: readonly string[]): string {
  return `[${xs.map((x) => JSON.stringify(x)).join(', ')}]`;
}

/** The match condition that leaves the bypass groups (cluster administrators, a backup restore) unchecked. */
export function bypassGroupsCondition(bypassGroups: readonly string[] = ['system:masters']): { name: string; expression: string } {
  return { name: 'not-a-bypass-group', expression: `!(has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in ${celList(bypassGroups)}))` };
}

/**
 * The match conditions that leave the controller's own requests and those of the bypass groups
 * unchecked, shared by the install's Instance policies.
 */
export function exemptionMatchConditions(writers: readonly string[], bypassGroups: readonly string[] = ['system:masters']): { name: string; expression: string }[] {
  return [{ name: 'not-the-controller', expression: `!(request.userInfo.username in ${celList(writers)})` }, bypassGroupsCondition(bypassGroups)];
}

/**
 * A ValidatingAdmissionPolicy that fails closed and its binding that denies, under one name: the
 * shape of every policy of the install.
 */
export function denyingPolicy(
  scope: Construct,
  ids: { policy: string; binding: string },
  name: string,
  labels: Record<string, string> | undefined,
  spec: Record<string, unknown>,
  binding: Record<string, unknown> = {},
): { policy: ApiObject; binding: ApiObject } {
  const metadata = { name, ...(labels ? { labels } : {}) };
  return {
    policy: new ApiObject(scope, ids.policy, { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata, spec: { failurePolicy: 'Fail', ...spec } }),
    binding: new ApiObject(scope, ids.binding, { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata, spec: { policyName: name, validationActions: ['Deny'], ...binding } }),
  };
}
