import { describe, expect, it } from 'vitest';
import { crownlabs, ROOT } from '../../support/cli.ts';

describe('crownlabs controller: /metrics authentication flags', () => {
  it('/metrics is secure by default (HTTPS, TokenReview and SubjectAccessReview); --no-metrics-secure and --metrics-cert-dir exist', () => {
    const help = crownlabs(['controller', '--help'], ROOT, { KUBECONFIG: '/nonexistent' }).stdout.replace(/\s+/g, ' ');
    expect(help).toMatch(/--metrics-secure serve \/metrics over HTTPS .*TokenReview.*SubjectAccessReview\) \(default: true\)/);
    expect(help).toContain('--no-metrics-secure serve /metrics over plain HTTP');
    expect(help).toContain('--metrics-cert-dir <dir>');
  });
});
