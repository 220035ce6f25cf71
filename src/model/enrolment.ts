/**
 * Whether an Instance's Tenant may run its Template (docs/behaviour.md §7.2 step 4): the Tenant the
 * Instance names must be enrolled, with any role (`user` or `manager`, §1.1), in the Workspace of
 * the Template. Otherwise nothing is rendered for the Instance, in every sink.
 */
import { WORKSPACE_REF, type Template, type Tenant } from '../inputs/types.ts';

export function isEnrolled(tenant: Tenant, workspace: string): boolean {
  return workspace !== '' && (tenant.spec.workspaces ?? []).some((w) => w.name === workspace && (w.role === 'user' || w.role === 'manager'));
}

/** Why the Tenant may not run the Template, or undefined when it may. */
export function enrolmentProblem(tenant: Tenant, template: Template): string | undefined {
  const workspace = template.spec[WORKSPACE_REF]?.name ?? '';
  if (isEnrolled(tenant, workspace)) return undefined;
  const where = `${template.metadata.namespace}/${template.metadata.name}`;
  return workspace
    ? `Tenant ${tenant.metadata.name} is not enrolled in workspace ${workspace} of Template ${where}: nothing is rendered for this Instance`
    : `Template ${where} names no workspace, so no Tenant is enrolled in it: nothing is rendered for this Instance`;
}
