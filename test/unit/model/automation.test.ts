import { describe, expect, it } from 'vitest';
import type { Environment, Instance } from '../../../src/inputs/types.ts';
import {
  expiryTime,
  interpretStatusCheck,
  parseLifespan,
  rfc3339,
  singleEnvironment,
  submissionPending,
  submissionRequired,
  submissionTime,
  submitterJobLabels,
  terminationLabels,
  watchedForTermination,
} from '../../../src/model/automation.ts';

const NOW = Date.parse('2026-11-23T18:00:00Z');

function env(persistent: boolean): Environment {
  return {
    name: 'desk',
    image: 'registry.example/desk:1',
    environmentType: 'Container',
    guiEnabled: true,
    disableControls: false,
    persistent,
    mode: 'Exam',
    rewriteURL: false,
    mountMyDriveVolume: false,
    resources: { cpu: 1, reservedCPUPercentage: 50, memory: '1Gi' },
  };
}

function instance(contentDestination?: string): Instance {
  return {
    apiVersion: 'crownlabs.polito.it/v1alpha2',
    kind: 'Instance',
    metadata: { name: 'exam-1', namespace: 'tenant-john' },
    spec: {
      'template.crownlabs.polito.it/TemplateRef': { name: 'exam', namespace: 'workspace-x' },
      'tenant.crownlabs.polito.it/TenantRef': { name: 'john' },
      running: true,
      ...(contentDestination !== undefined ? { customizationUrls: { contentDestination } } : {}),
    },
  };
}

describe('§8.3 Template.deleteAfter lifespan', () => {
  it.each([
    ['never', undefined],
    ['', undefined],
    [undefined, undefined],
    ['1m', 60_000],
    ['90m', 90 * 60_000],
    ['2h', 2 * 3_600_000],
    ['7d', 7 * 86_400_000],
    ['0m', 0],
    // e62be9e's cleanup durations also take seconds (2e8aeb9's CRD pattern refuses them before this).
    ['45s', 45_000],
  ])('%s → %s ms', (text, ms) => {
    const l = parseLifespan(text);
    expect(l.never ? undefined : l.ms).toBe(ms);
  });

  it.each(['1w', 'm', '-1h', '1.5h', '10 h', 'forever', '1h30m'])('"%s" is a clear error naming the value', (text) => {
    expect(() => parseLifespan(text)).toThrow(`invalid lifespan "${text}"`);
  });

  it('the expiry time is creationTimestamp + lifespan; never has none', () => {
    expect(expiryTime('2026-11-23T17:00:00Z', parseLifespan('90m'))).toBe(Date.parse('2026-11-23T18:30:00Z'));
    expect(expiryTime('2026-11-23T17:00:00Z', parseLifespan('never'))).toBeUndefined();
    expect(() => expiryTime(undefined, parseLifespan('1m'))).toThrow('invalid creationTimestamp');
  });
});

describe('§8.1 status-check answers', () => {
  it('times are written as RFC 3339 with whole seconds', () => {
    expect(rfc3339(Date.parse('2026-11-23T18:00:00.987Z'))).toBe('2026-11-23T18:00:00Z');
  });

  it('200 with a deadline: requeue, terminationTime = deadline', () => {
    const out = interpretStatusCheck(200, JSON.stringify({ deadline: '2026-11-23T20:00:00+01:00', idnumber: 's123' }), NOW);
    expect(out).toEqual({ action: 'requeue', terminationTime: '2026-11-23T19:00:00Z', response: { deadline: '2026-11-23T20:00:00+01:00', idnumber: 's123' } });
  });

  it('200 without a deadline: requeue, no terminationTime', () => {
    expect(interpretStatusCheck(200, '{"error":""}', NOW)).toMatchObject({ action: 'requeue', terminationTime: undefined });
  });

  it.each(['', 'not json', '<html>404</html>', '{"deadline":'])('404 terminates now whatever the body (%j)', (body) => {
    expect(interpretStatusCheck(404, body, NOW)).toEqual({ action: 'terminate', terminationTime: '2026-11-23T18:00:00Z' });
  });

  it.each([
    [200, 'garbage', 'invalid body'],
    [200, '[1,2]', 'not a JSON object'],
    [200, '{"deadline":42}', '"deadline" is not a string'],
    [200, '{"deadline":"tomorrow"}', 'not an RFC 3339 time'],
    [500, 'Internal Server Error', 'invalid body'],
    [500, '{}', 'unexpected status code 500'],
    [302, '{"deadline":"2026-11-23T20:00:00Z"}', 'unexpected status code 302'],
  ])('%d %j is an error (%s)', (code, body, message) => {
    const out = interpretStatusCheck(code, body, NOW);
    expect(out.action).toBe('error');
    expect(out.action === 'error' && out.message).toContain(message);
  });

  it('an error never quotes what a non-JSON body held (the URL may be internal; the message reaches an Event the tenant reads)', () => {
    const out = interpretStatusCheck(200, 'AKIASECRETKEY1234567890 role-name', NOW);
    expect(out).toEqual({ action: 'error', message: 'status check answered 200 with an invalid body: not JSON' });
    const long = interpretStatusCheck(200, JSON.stringify({ deadline: `x${'y'.repeat(500)}` }), NOW);
    expect(long.action === 'error' && long.message.length).toBeLessThan(140);
  });
});

describe('§8.1 termination and §8.2 submission rules', () => {
  it.each([
    ['https://upload.example/x', true, true],
    ['https://upload.example/x', false, false],
    ['', true, false],
    [undefined, true, false],
  ])('contentDestination %j, persistent %s → submissionRequired %s', (dest, persistent, required) => {
    expect(submissionRequired(instance(dest), env(persistent))).toBe(required);
  });

  it('a Template must have exactly one environment', () => {
    expect(singleEnvironment([env(true)])).toEqual(env(true));
    expect(singleEnvironment([])).toMatch(/0 environments/);
    expect(singleEnvironment([env(true), env(false)])).toMatch(/2 environments; instance automation needs exactly one/);
  });

  it('termination labels: stop watching, request a submission when required', () => {
    expect(terminationLabels(true)).toEqual({ 'crownlabs.polito.it/watch-for-instance-termination': 'false', 'crownlabs.polito.it/instance-submission-requested': 'true' });
    expect(terminationLabels(false)['crownlabs.polito.it/instance-submission-requested']).toBe('false');
  });

  it.each([
    [{ 'crownlabs.polito.it/watch-for-instance-termination': 'true' }, true],
    [{ 'crownlabs.polito.it/watch-for-instance-termination': 'false' }, false],
    [undefined, false],
  ])('watched for termination: %j → %s', (labels, watched) => {
    expect(watchedForTermination(labels)).toBe(watched);
  });

  it.each([
    [{ 'crownlabs.polito.it/instance-submission-requested': 'true' }, true],
    [{ 'crownlabs.polito.it/instance-submission-requested': 'true', 'crownlabs.polito.it/instance-submission-completed': 'false' }, true],
    [{ 'crownlabs.polito.it/instance-submission-requested': 'true', 'crownlabs.polito.it/instance-submission-completed': 'true' }, false],
    [{ 'crownlabs.polito.it/instance-submission-requested': 'false' }, false],
  ])('submission pending: %j → %s', (labels, pending) => {
    expect(submissionPending(labels)).toBe(pending);
  });

  it('the submitter Job carries component=submitter and the instance object labels', () => {
    expect(submitterJobLabels({ instanceName: 'exam.1', templateName: 'exam', tenantName: 'john' })).toEqual({
      'crownlabs.polito.it/component': 'submitter',
      'crownlabs.polito.it/managed-by': 'instance',
      'crownlabs.polito.it/instance': 'exam.1',
      'crownlabs.polito.it/template': 'exam',
      'crownlabs.polito.it/tenant': 'john',
    });
  });

  it('submissionTime: the Job completionTime, or now; none until it succeeded', () => {
    expect(submissionTime({ status: { succeeded: 1, completionTime: '2026-11-23T17:59:00Z' } }, NOW)).toBe('2026-11-23T17:59:00Z');
    expect(submissionTime({ status: { succeeded: 1 } }, NOW)).toBe('2026-11-23T18:00:00Z');
    expect(submissionTime({ status: { succeeded: 0 } }, NOW)).toBeUndefined();
    expect(submissionTime({ status: {} }, NOW)).toBeUndefined();
    expect(submissionTime(undefined, NOW)).toBeUndefined();
  });
});
