/**
 * The hosts a sandbox Ingress may not claim (docs/behaviour.md §5.5): the instances' host (Exam and
 * Exercise hosts are under it), and the hosts of the services the lab's requests go to through the
 * cluster's ingress: the shared oauth2-proxy nginx asks on every instance request, the OIDC issuer the
 * per-instance proxies trust, and Keycloak, which the controller logs into.
 */
import type { ComposerConfig } from '../config/config.ts';

export function labHostsOf(config: Pick<ComposerConfig, 'websiteBaseUrl' | 'instancesAuthUrl' | 'oidcIssuerUrl' | 'keycloakUrl'>): string[] {
  const hosts = new Set([config.websiteBaseUrl.toLowerCase()]);
  for (const url of [config.instancesAuthUrl, config.oidcIssuerUrl, config.keycloakUrl]) {
    // The configuration checks these URLs; a bare IP address is no Ingress host.
    if (url) {
      const host = new URL(url).hostname.toLowerCase();
      if (host && !/^[\d.]+$/.test(host) && !host.startsWith('[')) hosts.add(host);
    }
  }
  return [...hosts].sort();
}
