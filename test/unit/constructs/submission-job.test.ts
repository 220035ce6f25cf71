import { describe, expect, it } from 'vitest';
import type { Instance } from '../../../src/inputs/types.ts';
import { renderSubmissionJob } from '../../../src/compose/submission.ts';
import { defaultConfig } from '../../../src/config/config.ts';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

const instance: Instance = {
  apiVersion: 'crownlabs.polito.it/v1alpha2',
  kind: 'Instance',
  metadata: { name: 'exam.1', namespace: 'tenant-john-doe', uid: '11111111-2222-3333-4444-555555555555' },
  spec: {
    'template.crownlabs.polito.it/TemplateRef': { name: 'exam', namespace: 'workspace-x' },
    'tenant.crownlabs.polito.it/TenantRef': { name: 'john.doe' },
    running: false,
    customizationUrls: { contentDestination: 'https://upload.example/exams/42' },
  },
};

const config = { ...defaultConfig(), containerEnvContentUploaderImg: 'crownlabs/content-uploader', containerEnvSidecarsTag: 'v0.9.1' };
const owner = { apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Instance', name: 'exam.1', uid: instance.metadata.uid! };
const job = renderSubmissionJob({ instance, envName: 'env', level: '2e8aeb9', destinationUrl: 'https://upload.example/exams/42', config, owner }) as Any;
const pod = job.spec.template.spec;
const container = pod.containers[0];

describe('§8.2 submission Job N-submitter', () => {
  it('is a batch/v1 Job named canon(instance)-submitter in the Instance namespace, owned by the Instance', () => {
    expect(job.apiVersion).toBe('batch/v1');
    expect(job.kind).toBe('Job');
    expect(job.metadata.name).toBe('exam-1-submitter');
    expect(job.metadata.namespace).toBe('tenant-john-doe');
    expect(job.metadata.ownerReferences).toEqual([{ ...owner, controller: true, blockOwnerDeletion: true }]);
  });

  it('carries component=submitter and the instance object labels', () => {
    expect(job.metadata.labels).toMatchObject({
      'crownlabs.polito.it/component': 'submitter',
      'crownlabs.polito.it/managed-by': 'instance',
      'crownlabs.polito.it/instance': 'exam.1',
      'crownlabs.polito.it/template': 'exam',
      'crownlabs.polito.it/tenant': 'john.doe',
    });
  });

  it('backoffLimit 10, ttlSecondsAfterFinished 300, restartPolicy OnFailure', () => {
    expect(job.spec.backoffLimit).toBe(10);
    expect(job.spec.ttlSecondsAfterFinished).toBe(300);
    expect(pod.restartPolicy).toBe('OnFailure');
  });

  it('runs as 1010/1010/1010 non-root without a ServiceAccount token', () => {
    expect(pod.securityContext).toEqual({ runAsUser: 1010, runAsGroup: 1010, fsGroup: 1010, runAsNonRoot: true });
    expect(pod.automountServiceAccountToken).toBe(false);
  });

  it('mounts the persistent PVC N at /media/data', () => {
    expect(pod.volumes).toEqual([{ name: 'persistent', persistentVolumeClaim: { claimName: 'exam-1' } }]);
    expect(container.volumeMounts).toEqual([{ name: 'persistent', mountPath: '/media/data' }]);
  });

  it('content-uploader: <uploader-img>:<sidecars-tag>, 500m/256Mi requests, 1/1Gi limits, restrictive securityContext', () => {
    expect(pod.containers).toHaveLength(1);
    expect(container.name).toBe('content-uploader');
    expect(container.image).toBe('crownlabs/content-uploader:v0.9.1');
    expect(container.resources).toEqual({ requests: { cpu: '500m', memory: '256Mi' }, limits: { cpu: '1', memory: '1Gi' } });
    expect(container.securityContext).toEqual({ capabilities: { drop: ['ALL'] }, privileged: false, allowPrivilegeEscalation: false });
  });

  it('env SOURCE_PATH, DESTINATION_URL and FILENAME (the Instance name)', () => {
    expect(container.env).toEqual([
      { name: 'SOURCE_PATH', value: '/media/data' },
      { name: 'DESTINATION_URL', value: 'https://upload.example/exams/42' },
      { name: 'FILENAME', value: 'exam.1' },
    ]);
  });
});
