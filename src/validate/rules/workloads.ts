/** Pods, workload controllers and jobs (core, apps, batch): the API server's checks beyond the OpenAPI schemas (see ../rules.ts). */
import type { Ajv } from 'ajv';
import { keyword, isObject, asArray, show, selectorMatches, selectorIsEmpty } from './support.ts';

export function registerWorkloadsRules(ajv: Ajv): void {
  // ValidatePodSpec: containers required, unique names (containers and init containers share
  // one namespace), unique volume names, every volumeMount names a volume.
  keyword(ajv, 'k8sPodSpec', (data, _s, push) => {
    if (!isObject(data)) return;
    const volumes = new Set<string>();
    asArray(data.volumes).forEach((v, i) => {
      if (!isObject(v) || typeof v.name !== 'string') return;
      if (volumes.has(v.name)) push(['volumes', i, 'name'], `duplicate volume name ${show(v.name)}`);
      volumes.add(v.name);
    });
    if (asArray(data.containers).length === 0) push(['containers'], 'required value is missing: a pod needs at least one container');
    const names = new Set<string>();
    for (const list of ['initContainers', 'containers'] as const) {
      asArray(data[list]).forEach((c, i) => {
        if (!isObject(c)) return;
        if (typeof c.name === 'string') {
          if (names.has(c.name)) push([list, i, 'name'], `duplicate container name ${show(c.name)}`);
          names.add(c.name);
        }
        asArray(c.volumeMounts).forEach((m, j) => {
          if (isObject(m) && typeof m.name === 'string' && !volumes.has(m.name)) push([list, i, 'volumeMounts', j, 'name'], `volume ${show(m.name)} not found among spec.volumes`);
        });
      });
    }
  });

  // apps ValidateDeploymentSpec / ValidateReplicaSetSpec / ValidateStatefulSetSpec / ValidateDaemonSetSpec:
  // a non-empty selector that matches the template's labels; template restartPolicy Always.
  keyword(ajv, 'k8sWorkloadSpec', (data, _s, push) => {
    if (!isObject(data) || !isObject(data.selector)) return;
    if (selectorIsEmpty(data.selector)) {
      push(['selector'], 'empty selector is invalid for this workload');
      return;
    }
    const template = isObject(data.template) ? data.template : {};
    const meta = isObject(template.metadata) ? template.metadata : {};
    const labels = isObject(meta.labels) ? meta.labels : {};
    if (!selectorMatches(data.selector, labels)) push(['template', 'metadata', 'labels'], '`selector` does not match template `labels`');
    const spec = isObject(template.spec) ? template.spec : {};
    if (spec.restartPolicy !== undefined && spec.restartPolicy !== 'Always') push(['template', 'spec', 'restartPolicy'], `unsupported value ${show(spec.restartPolicy)}: must be "Always"`);
  });

  // batch ValidateJobSpec: the template's restartPolicy must be OnFailure or Never.
  keyword(ajv, 'k8sJobSpec', (data, _s, push) => {
    if (!isObject(data)) return;
    const template = isObject(data.template) ? data.template : {};
    const spec = isObject(template.spec) ? template.spec : {};
    if (spec.restartPolicy !== 'OnFailure' && spec.restartPolicy !== 'Never') {
      push(['template', 'spec', 'restartPolicy'], `${spec.restartPolicy === undefined ? 'required value is missing' : `unsupported value ${show(spec.restartPolicy)}`}: must be "OnFailure" or "Never"`);
    }
  });
}
