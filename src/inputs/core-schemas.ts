import type { CrdVersion } from './crd-schemas.ts';

/**
 * Structural schemas (as in a CRD) of the two core/v1 kinds the input may hold and of the
 * ObjectMeta every input object has, so that unknown fields are errors there too, as with
 * `kubectl --validate=strict`. They copy the fields of the vendored Kubernetes OpenAPI
 * (imports/k8s-openapi/api__v1_openapi.json; a unit test keeps them in step). Name, namespace,
 * labels and annotations are left open here: parse.ts checks them with its own messages.
 */

const STRING = { type: 'string' };
const BOOLEAN = { type: 'boolean' };
const INTEGER = { type: 'integer' };
const STRINGS = { type: 'array', items: STRING };
/** metav1.Time: an RFC 3339 time; null is what `kubectl create --dry-run -o yaml` writes. */
const TIME = { type: 'string', format: 'date-time', nullable: true };
const CHECKED_BY_PARSE = {};

export const OBJECT_META_SCHEMA = {
  type: 'object',
  properties: {
    annotations: CHECKED_BY_PARSE,
    creationTimestamp: TIME,
    deletionGracePeriodSeconds: INTEGER,
    deletionTimestamp: TIME,
    finalizers: STRINGS,
    generateName: STRING,
    generation: INTEGER,
    labels: CHECKED_BY_PARSE,
    managedFields: { type: 'array', items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
    name: CHECKED_BY_PARSE,
    namespace: CHECKED_BY_PARSE,
    ownerReferences: {
      type: 'array',
      items: {
        type: 'object',
        required: ['apiVersion', 'kind', 'name', 'uid'],
        properties: { apiVersion: STRING, blockOwnerDeletion: BOOLEAN, controller: BOOLEAN, kind: STRING, name: STRING, uid: STRING },
      },
    },
    resourceVersion: STRING,
    selfLink: STRING,
    uid: STRING,
  },
};

const NAMESPACE_SCHEMA = {
  type: 'object',
  properties: {
    apiVersion: STRING,
    kind: STRING,
    metadata: OBJECT_META_SCHEMA,
    spec: { type: 'object', properties: { finalizers: STRINGS } },
    status: {
      type: 'object',
      properties: {
        conditions: {
          type: 'array',
          items: {
            type: 'object',
            required: ['type', 'status'],
            properties: { lastTransitionTime: TIME, message: STRING, reason: STRING, status: STRING, type: STRING },
          },
        },
        phase: STRING,
      },
    },
  },
};

const SECRET_SCHEMA = {
  type: 'object',
  properties: {
    apiVersion: STRING,
    kind: STRING,
    metadata: OBJECT_META_SCHEMA,
    // Values of `data` are base64, as the API server takes them.
    data: { type: 'object', additionalProperties: { type: 'string', format: 'byte' } },
    immutable: BOOLEAN,
    stringData: { type: 'object', additionalProperties: STRING },
    type: STRING,
  },
};

const core = (kind: string, plural: string, namespaced: boolean, schema: Record<string, unknown>): CrdVersion => ({
  group: '',
  kind,
  plural,
  version: 'v1',
  namespaced,
  schema,
  file: 'src/inputs/core-schemas.ts',
});

/** The core/v1 kinds of the input, validated like the CrownLabs kinds. */
export const CORE_INPUT_SCHEMAS: readonly CrdVersion[] = [core('Namespace', 'namespaces', false, NAMESPACE_SCHEMA), core('Secret', 'secrets', true, SECRET_SCHEMA)];
