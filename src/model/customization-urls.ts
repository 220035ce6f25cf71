/**
 * An Instance's customization URLs, read from whichever shape it holds (docs/behaviour.md §16.3):
 * `spec.customizationUrls {statusCheck, contentOrigin, contentDestination}` at 2e8aeb9, or
 * `spec.statusCheckUrl` and `spec.contentUrls.<environment> {origin, destination}` at e62be9e.
 * Validation guarantees an Instance holds one shape only. At 2e8aeb9 the content URLs are the
 * Instance's, so they apply to every environment.
 */
import type { Instance } from '../inputs/types.ts';

/** The URL the termination step polls (docs/behaviour.md §8.1), when set. */
export function statusCheckUrl(instance: Instance): string | undefined {
  return instance.spec.statusCheckUrl || instance.spec.customizationUrls?.statusCheck || undefined;
}

/** Where the environment's initial content is downloaded from, when set (docs/behaviour.md §7.5). */
export function contentOrigin(instance: Instance, environment: string): string | undefined {
  return instance.spec.contentUrls?.[environment]?.origin || instance.spec.customizationUrls?.contentOrigin || undefined;
}

/** Where the environment's content is uploaded on termination, when set (docs/behaviour.md §8.2). */
export function contentDestination(instance: Instance, environment: string): string | undefined {
  return instance.spec.contentUrls?.[environment]?.destination || instance.spec.customizationUrls?.contentDestination || undefined;
}
