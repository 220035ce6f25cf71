/**
 * Kubernetes name checks (k8s.io/apimachinery/pkg/util/validation), shared by the input parser,
 * the config checks and the pre-write validator so the three never disagree.
 */

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const WILDCARD_DNS1123_SUBDOMAIN = /^\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** IsDNS1123Label: at most 63 lower-case alphanumerics or '-', alphanumeric at both ends. */
export function isDns1123Label(s: string): boolean {
  return s.length <= 63 && DNS1123_LABEL.test(s);
}

/** IsDNS1123Subdomain: dot-separated DNS-1123 labels, at most 253 characters. */
export function isDns1123Subdomain(s: string): boolean {
  return s.length <= 253 && DNS1123_SUBDOMAIN.test(s);
}

/** A DNS-1123 subdomain, or one with a leading `*.` (IsWildcardDNS1123Subdomain). */
export function isHostName(s: string): boolean {
  return s.startsWith('*') ? s.length <= 253 && WILDCARD_DNS1123_SUBDOMAIN.test(s) : isDns1123Subdomain(s);
}

/** A DNS name of at most `max` characters whose every dot-separated label is at most 63 (stricter than a subdomain). */
export function isDnsName(s: string, max = 253): boolean {
  return s.length <= max && s.split('.').every((l) => l.length <= 63 && DNS1123_LABEL.test(l));
}

/** IsQualifiedName (label and annotation keys): `[prefix/]name`, prefix a DNS-1123 subdomain, name ≤ 63 alphanumerics, `-_.`. */
export function isQualifiedName(s: string): boolean {
  const parts = s.split('/');
  if (parts.length > 2) return false;
  const name = parts[parts.length - 1];
  if (parts.length === 2 && (parts[0].length === 0 || !isDns1123Subdomain(parts[0]))) return false;
  return name.length > 0 && name.length <= 63 && QUALIFIED_NAME.test(name);
}

/** IsValidLabelValue: empty, or at most 63 alphanumerics, `-_.`, alphanumeric at both ends. */
export function isLabelValue(s: string): boolean {
  return s.length <= 63 && LABEL_VALUE.test(s);
}

/** IsValidPortName (IANA_SVC_NAME). */
export function isPortName(s: string): boolean {
  return s.length > 0 && s.length <= 15 && /^[-a-z0-9]+$/.test(s) && /[a-z]/.test(s) && !s.includes('--') && !s.startsWith('-') && !s.endsWith('-');
}

/** rbac ValidateRBACName = path.IsValidPathSegmentName. */
export function isPathSegmentName(s: string): boolean {
  return s !== '.' && s !== '..' && !s.includes('/') && !s.includes('%');
}
