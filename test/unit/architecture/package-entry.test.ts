// The product loads cdk8s-plus-27's L1 classes from their own module: the package's index also
// loads the whole L2 library, which nothing here uses (~14 ms of every start that renders,
// docs/architecture.md "Dependencies — facts measured").
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SOURCE_DIRS } from '../../../src/runtime/bundle.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const INDEX_IMPORT = /(?:from\s+|import\s*\(\s*|require\s*\(\s*)['"]cdk8s-plus-27['"]/;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? sources(path) : /\.m?[jt]s$/.test(e.name) ? [path] : [];
  });
}

describe("cdk8s-plus-27's entry", () => {
  it('the pattern finds each way of loading the index, and not the k8s module', () => {
    for (const line of ["import { k8s } from 'cdk8s-plus-27';", 'const p = await import("cdk8s-plus-27");', "require('cdk8s-plus-27')"]) expect(line).toMatch(INDEX_IMPORT);
    expect("import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';").not.toMatch(INDEX_IMPORT);
  });

  it('no product module loads the package index', () => {
    const files = SOURCE_DIRS.flatMap((d) => sources(join(ROOT, d)));
    expect(files.length).toBeGreaterThan(100);
    expect(files.filter((f) => INDEX_IMPORT.test(readFileSync(f, 'utf8'))).map((f) => f.slice(ROOT.length + 1))).toEqual([]);
  });
});
