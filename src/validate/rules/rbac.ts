/** Roles and role bindings (rbac): the API server's checks beyond the OpenAPI schemas (see ../rules.ts). */
import type { Ajv } from 'ajv';
import { isDns1123Subdomain, isPathSegmentName } from '../../inputs/k8s-names.ts';
import { NAME_MESSAGES } from '../../model/api-server-rules.ts';
import { keyword, isObject, asArray, show } from './support.ts';

export function registerRbacRules(ajv: Ajv): void {
  // rbac ValidateRole / ValidateClusterRole → ValidatePolicyRule.
  keyword(ajv, 'k8sRbacRules', (data, schema, push) => {
    if (!isObject(data)) return;
    const namespaced = isObject(schema) && schema.namespaced === true;
    asArray(data.rules).forEach((r, i) => {
      if (!isObject(r)) return;
      if (asArray(r.verbs).length === 0) push(['rules', i, 'verbs'], 'required value is missing: verbs must contain at least one value');
      if (asArray(r.nonResourceURLs).length > 0) {
        if (namespaced) push(['rules', i, 'nonResourceURLs'], 'namespaced rules cannot apply to non-resource URLs');
        if (asArray(r.apiGroups).length || asArray(r.resources).length || asArray(r.resourceNames).length) {
          push(['rules', i, 'nonResourceURLs'], 'rules cannot apply to both regular resources and non-resource URLs');
        }
        return;
      }
      if (asArray(r.apiGroups).length === 0) push(['rules', i, 'apiGroups'], 'required value is missing: resource rules must supply at least one api group');
      if (asArray(r.resources).length === 0) push(['rules', i, 'resources'], 'required value is missing: resource rules must supply at least one resource');
    });
  });

  // rbac ValidateRoleBinding / ValidateClusterRoleBinding / ValidateRoleBindingSubject (after
  // SetDefaults_Subject, which fills apiGroup for User and Group).
  keyword(ajv, 'k8sRoleBinding', (data, schema, push) => {
    if (!isObject(data)) return;
    const cluster = isObject(schema) && schema.cluster === true;
    const ref = isObject(data.roleRef) ? data.roleRef : undefined;
    if (ref) {
      if (ref.apiGroup !== undefined && ref.apiGroup !== 'rbac.authorization.k8s.io') push(['roleRef', 'apiGroup'], `unsupported value ${show(ref.apiGroup)}: must be "rbac.authorization.k8s.io"`);
      const kinds = cluster ? ['ClusterRole'] : ['ClusterRole', 'Role'];
      if (typeof ref.kind === 'string' && !kinds.includes(ref.kind)) push(['roleRef', 'kind'], `unsupported value ${show(ref.kind)}: must be one of ${kinds.map(show).join(', ')}`);
      if (typeof ref.name === 'string' && (ref.name === '' || !isPathSegmentName(ref.name))) push(['roleRef', 'name'], `${show(ref.name)}: ${NAME_MESSAGES.pathSegment}`);
    }
    asArray(data.subjects).forEach((s, i) => {
      if (!isObject(s)) return;
      const group = s.apiGroup ?? '';
      if (s.kind === 'ServiceAccount') {
        if (typeof s.name === 'string' && !isDns1123Subdomain(s.name)) push(['subjects', i, 'name'], `${show(s.name)}: ${NAME_MESSAGES.dns1123Subdomain}`);
        if (group !== '') push(['subjects', i, 'apiGroup'], `unsupported value ${show(group)}: must be ""`);
        if (cluster && (typeof s.namespace !== 'string' || s.namespace === '')) push(['subjects', i, 'namespace'], 'required value is missing');
      } else if (s.kind === 'User' || s.kind === 'Group') {
        if (group !== '' && group !== 'rbac.authorization.k8s.io') push(['subjects', i, 'apiGroup'], `unsupported value ${show(group)}: must be "rbac.authorization.k8s.io"`);
      } else if (typeof s.kind === 'string') {
        push(['subjects', i, 'kind'], `unsupported value ${show(s.kind)}: must be one of "Group", "ServiceAccount", "User"`);
      }
    });
  });
}
