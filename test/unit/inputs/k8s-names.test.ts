import { describe, expect, it } from 'vitest';
import { isDns1123Label, isDns1123Subdomain, isDnsName, isHostName, isLabelValue, isPathSegmentName, isPortName, isQualifiedName } from '../../../src/inputs/k8s-names.ts';

describe('k8s-names (apimachinery util/validation)', () => {
  it('DNS-1123 labels: lower-case alphanumerics and inner dashes, at most 63', () => {
    for (const ok of ['a', 'a-b', '0x', 'a'.repeat(63)]) expect(isDns1123Label(ok), ok).toBe(true);
    for (const bad of ['', '-a', 'a-', 'A', 'a.b', 'a_b', 'a'.repeat(64)]) expect(isDns1123Label(bad), bad).toBe(false);
  });

  it('DNS-1123 subdomains: dotted labels, at most 253 in total', () => {
    for (const ok of ['a.b', 'x-1.example.com', `${'a'.repeat(63)}.${'b'.repeat(63)}`]) expect(isDns1123Subdomain(ok), ok).toBe(true);
    for (const bad of ['', 'a..b', '.a', 'a.', 'A.b', `${'a.'.repeat(126)}ab`]) expect(isDns1123Subdomain(bad), bad).toBe(false);
  });

  it('a DNS name also limits every label to 63, where a subdomain does not', () => {
    const longLabel = `${'a'.repeat(64)}.b`;
    expect(isDns1123Subdomain(longLabel)).toBe(true);
    expect(isDnsName(longLabel)).toBe(false);
    expect(isDnsName('nfs.example')).toBe(true);
    expect(isDnsName('abc', 2)).toBe(false);
  });

  it('host names allow one leading "*."', () => {
    expect(isHostName('*.example.com')).toBe(true);
    expect(isHostName('a.*.example.com')).toBe(false);
    expect(isHostName('*')).toBe(false);
  });

  it('qualified names (label keys): [DNS-subdomain prefix/]name of at most 63', () => {
    for (const ok of ['app', 'A_b.c', 'crownlabs.polito.it/tenant', `p/${'n'.repeat(63)}`]) expect(isQualifiedName(ok), ok).toBe(true);
    for (const bad of ['', '/x', 'a/b/c', 'UPPER.prefix/x', 'p/', '-x', `p/${'n'.repeat(64)}`, `${'p'.repeat(254)}/x`]) expect(isQualifiedName(bad), bad).toBe(false);
  });

  it('label values: empty or at most 63 alphanumerics with inner "-_."', () => {
    for (const ok of ['', 'v1', 'a.b_c-d', 'x'.repeat(63)]) expect(isLabelValue(ok), ok).toBe(true);
    for (const bad of ['-a', 'a-', 'a b', 'a/b', 'x'.repeat(64)]) expect(isLabelValue(bad), bad).toBe(false);
  });

  it('port names (IANA_SVC_NAME) and path-segment names', () => {
    expect(isPortName('http')).toBe(true);
    for (const bad of ['', '80', 'a--b', '-a', 'a'.repeat(16), 'Http']) expect(isPortName(bad), bad).toBe(false);
    expect(isPathSegmentName('crownlabs:admin')).toBe(true);
    for (const bad of ['.', '..', 'a/b', 'a%b']) expect(isPathSegmentName(bad), bad).toBe(false);
  });
});
