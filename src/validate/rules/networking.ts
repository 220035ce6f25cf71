/** Services and ingresses (core, networking): the API server's checks beyond the OpenAPI schemas (see ../rules.ts). */
import type { Ajv } from 'ajv';
import { keyword, isObject, asArray, show } from './support.ts';

export function registerNetworkingRules(ajv: Ajv): void {
  // core validateService: ports required (but for ExternalName and headless services), every port
  // named when there are several, names and port/protocol pairs unique.
  keyword(ajv, 'k8sServiceSpec', (data, _s, push) => {
    if (!isObject(data)) return;
    const ports = asArray(data.ports);
    const headless = data.clusterIP === 'None';
    if (ports.length === 0 && data.type !== 'ExternalName' && !headless) push(['ports'], 'required value is missing');
    const names = new Set<string>();
    const pairs = new Set<string>();
    ports.forEach((p, i) => {
      if (!isObject(p)) return;
      if (ports.length > 1 && (typeof p.name !== 'string' || p.name === '')) push(['ports', i, 'name'], 'required value is missing: every port of a multi-port service needs a name');
      if (typeof p.name === 'string' && p.name !== '') {
        if (names.has(p.name)) push(['ports', i, 'name'], `duplicate port name ${show(p.name)}`);
        names.add(p.name);
      }
      const pair = `${String(p.port)}/${String(p.protocol ?? 'TCP')}`;
      if (pairs.has(pair)) push(['ports', i], `duplicate port ${pair}`);
      pairs.add(pair);
    });
  });

  // networking validateIngressSpec / validateHTTPIngressPath / validateIngressBackend.
  keyword(ajv, 'k8sIngressSpec', (data, _s, push) => {
    if (!isObject(data)) return;
    if (asArray(data.rules).length === 0 && !isObject(data.defaultBackend)) push(['rules'], 'either `defaultBackend` or `rules` must be specified');
  });
  keyword(ajv, 'k8sIngressPath', (data, _s, push) => {
    if (!isObject(data)) return;
    if ((data.pathType === 'Exact' || data.pathType === 'Prefix') && !(typeof data.path === 'string' && data.path.startsWith('/'))) {
      push(['path'], `${show(data.path)}: must be an absolute path when pathType is ${data.pathType}`);
    }
  });
  keyword(ajv, 'k8sIngressBackend', (data, _s, push) => {
    if (!isObject(data)) return;
    if (isObject(data.service) === isObject(data.resource)) push([], 'exactly one of `service` or `resource` must be specified');
    const port = isObject(data.service) && isObject(data.service.port) ? data.service.port : undefined;
    if (port) {
      const hasName = typeof port.name === 'string' && port.name !== '';
      const hasNumber = port.number !== undefined && port.number !== 0;
      if (hasName && hasNumber) push(['service', 'port'], 'cannot set both port name & port number');
      if (!hasName && !hasNumber) push(['service', 'port'], 'port name or number is required');
    }
  });
}
