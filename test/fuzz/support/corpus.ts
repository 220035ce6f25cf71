// The valid inputs the document fuzzers mutate: the bundled example lab (with its comments, as an
// operator writes it) plus the kinds it lacks, and a small generated lab with every environment
// flavour. Each base renders without errors, so a mutation is what makes a case differ.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { generateLab } from '../../support/generate-lab.ts';
import { LAB } from '../../support/cli.ts';

export interface BaseFile {
  name: string;
  /** The file as written (comments and layout included). */
  text: string;
}

export const BASE_NAMES = ['example', 'generated'] as const;
export type BaseName = (typeof BASE_NAMES)[number];

const TARGET = { 'crownlabs.polito.it/operator-selector': 'production' };

/** Kinds the example lab has no document of: a live Namespace, a mydrive-info Secret, a snapshot, an image list. */
const EXTRA_DOCS: unknown[] = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tenant-john-doe', labels: { ...TARGET, 'crownlabs.polito.it/type': 'tenant' } } },
  {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'mydrive-info', namespace: 'tenant-jane-smith' },
    type: 'Opaque',
    stringData: { 'server-name': 'nfs.example', path: '/export/jane' },
  },
  {
    apiVersion: 'crownlabs.polito.it/v1alpha2',
    kind: 'InstanceSnapshot',
    metadata: { name: 'black-tea-snap', namespace: 'tenant-john-doe', creationTimestamp: '2026-01-02T10:00:00Z' },
    spec: { instanceRef: { name: 'black-tea-0042', namespace: 'tenant-john-doe' }, imageName: 'black-tea-image' },
  },
  {
    apiVersion: 'crownlabs.polito.it/v1alpha1',
    kind: 'ImageList',
    metadata: { name: 'crownlabs-virtual-machine-images' },
    spec: { registryName: 'registry.example', images: [{ name: 'tea/green', versions: ['finest', 'v2'] }] },
  },
];

function multiDoc(docs: readonly unknown[]): string {
  return docs.map((d) => stringify(d, { lineWidth: 0 })).join('---\n');
}

let cache: Record<BaseName, BaseFile[]> | undefined;

export function baseFiles(base: BaseName): BaseFile[] {
  cache ??= {
    example: [
      ...readdirSync(LAB)
        .filter((f) => f.endsWith('.yaml'))
        .sort()
        .map((name) => ({ name, text: readFileSync(join(LAB, name), 'utf8') })),
      { name: 'zz-extras.yaml', text: multiDoc(EXTRA_DOCS) },
    ],
    generated: (() => {
      const objects = generateLab({ workspaces: 1, tenants: 2, instances: 7 });
      const byKind = new Map<string, unknown[]>();
      for (const o of objects) byKind.set(o.kind, [...(byKind.get(o.kind) ?? []), o]);
      return [...byKind].map(([kind, docs]) => ({ name: `${kind.toLowerCase()}s.yaml`, text: multiDoc(docs) }));
    })(),
  };
  return cache[base];
}
