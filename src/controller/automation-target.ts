/**
 * What the instance automation reconcilers (termination, submission, expiration) check first: the
 * Instance a key names, as the cache holds it, and its single environment.
 */
import type { Environment, Instance } from '../inputs/types.ts';
import { singleEnvironment } from '../model/automation.ts';
import { effectiveEnvironments } from '../model/instance-plan.ts';
import type { ControllerContext } from './context.ts';
import type { CachedObject } from '../kube/informer.ts';
import { whitelisted } from './predicates.ts';
import { failedValidation } from './terminal-error.ts';

/**
 * The live Instance an automation acts on, or undefined when there is nothing to do: gone, being
 * deleted, not selected by `wanted` (its labels), or in a namespace outside the whitelist.
 */
export function automationTarget(ctx: ControllerContext, namespace: string, name: string, wanted: (labels: Record<string, string> | undefined) => boolean = () => true): CachedObject | undefined {
  const live = ctx.caches.instances.get(namespace, name);
  if (!live || live.metadata.deletionTimestamp || !wanted(live.metadata.labels)) return undefined;
  return whitelisted(ctx, namespace) ? live : undefined;
}

/** The validated Instance behind a live one (an invalid Instance is a terminal error: not retried until it changes). */
export function validatedInstance(ctx: ControllerContext, live: CachedObject): Instance {
  const instance = ctx.caches.inventory.instances.get(`${live.metadata.namespace}/${live.metadata.name}`);
  if (!instance) throw failedValidation(ctx.caches, live);
  return instance;
}

/** The one environment automation works on, or why there is none (Template missing, several environments). */
export function automationEnvironment(ctx: ControllerContext, instance: Instance): Environment | string {
  const template = ctx.caches.inventory.templateOf(instance);
  if (!template) return `Template ${instance.spec['template.crownlabs.polito.it/TemplateRef'].name} not found`;
  return singleEnvironment(effectiveEnvironments(instance, template));
}
