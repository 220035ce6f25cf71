/**
 * What `crownlabs migrate --apply` sends to an object's status subresource after its update
 * (docs/behaviour.md §16.5, "Status"). An update of the object itself never changes its status,
 * so a status migrate maps (an Instance's) or drops (a Tenant's, an InstanceSnapshot's phase outside
 * e62be9e's enum) is written there: `set` the migrated one, or `clear` it. A dropped status left
 * in place would stay in etcd, read through the e62be9e schema: a Tenant's then lacks the
 * `keycloak` and `personalWorkspaceCreated` that schema requires, and the e62be9e controller
 * refuses the Tenant as invalid (with every Instance of it) before it can write its own.
 */
import type { ObjectMigration } from './level-migration.ts';

export type StatusWrite = 'set' | 'clear' | undefined;

export function statusWrite(m: Pick<ObjectMigration, 'before' | 'after'>): StatusWrite {
  if (m.after.status !== undefined) return m.after.kind === 'Instance' ? 'set' : undefined;
  return m.before.status !== undefined ? 'clear' : undefined;
}
