// The product loads cdk8s-plus-27's L1 classes from their own module: the package's index also
// loads the whole L2 library, which nothing here uses (~14 ms of every start that renders,
// docs/architecture.md "Dependencies — facts measured").
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { SOURCE_DIRS } from '../../../src/runtime/bundle.mjs';
import { readImportSpecifiers } from '../../support/import-graph.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const INDEX = 'cdk8s-plus-27';

/** The files under `folders` that load the package index. */
const indexImporters = (root: string, folders: readonly string[]) =>
  [...readImportSpecifiers(root, folders)].filter(([, specifiers]) => specifiers.includes(INDEX)).map(([file]) => file);

describe("cdk8s-plus-27's entry", () => {
  const dir = mkdtempSync(join(tmpdir(), 'package-entry-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('finds each way of loading the index, and not the k8s module', () => {
    const lines = {
      'src/static.ts': "import { k8s } from 'cdk8s-plus-27';",
      'src/dynamic.ts': 'const p = await import("cdk8s-plus-27");',
      'src/required.mjs': "const p = require('cdk8s-plus-27');",
      'src/k8s-module.ts': "import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';",
    };
    for (const [file, text] of Object.entries(lines)) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      writeFileSync(join(dir, file), text);
    }
    expect(indexImporters(dir, ['src']).sort()).toEqual(['src/dynamic.ts', 'src/required.mjs', 'src/static.ts']);
  });

  it('no product module loads the package index', () => {
    const specifiers = readImportSpecifiers(ROOT, SOURCE_DIRS);
    expect(specifiers.size).toBeGreaterThan(100);
    expect(indexImporters(ROOT, SOURCE_DIRS)).toEqual([]);
  });
});
