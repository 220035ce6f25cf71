import { afterEach, describe, expect, it, vi } from 'vitest';
import * as yaml from 'yaml';
import { parseInputText } from '../../../src/inputs/parse.ts';

// The `yaml` package re-parses a file only to give a problem its line: a clean file is read once.
vi.mock('yaml', async (importOriginal) => {
  const real = await importOriginal<typeof import('yaml')>();
  return { ...real, parseAllDocuments: vi.fn(real.parseAllDocuments) };
});

const tenant = (labels: string) => `apiVersion: crownlabs.polito.it/v1alpha2
kind: Tenant
metadata:
  name: t
  labels: {${labels}}
  annotations: {example.org/note: "any value"}
spec: {firstName: A, lastName: B, email: a@b.c}
`;

describe('source positions of input files', () => {
  afterEach(() => vi.mocked(yaml.parseAllDocuments).mockClear());

  it('are not computed for a valid file with labels and annotations', () => {
    const { objects, problems } = parseInputText(tenant('crownlabs.polito.it/operator-selector: production, team: a'), 'f.yaml');
    expect(problems).toEqual([]);
    expect(objects).toHaveLength(1);
    expect(yaml.parseAllDocuments).not.toHaveBeenCalled();
  });

  it('are computed once a label is invalid', () => {
    const { problems } = parseInputText(tenant('"bad key!": v'), 'f.yaml');
    expect(problems.map((p) => [p.line, p.field])).toEqual([[5, 'metadata.labels["bad key!"]']]);
    expect(yaml.parseAllDocuments).toHaveBeenCalledTimes(1);
  });
});
