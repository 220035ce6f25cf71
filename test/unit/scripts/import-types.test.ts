import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../support/cli.ts';

describe('npm run import (scripts/import-types.sh, #17.2)', () => {
  it('regenerates imports/ from the vendored CRDs and leaves cdk8s.yaml byte-identical', () => {
    // A copy of what the script reads, so the repository's own files are never rewritten.
    const dir = mkdtempSync(join(tmpdir(), 'import-types-'));
    cpSync(join(ROOT, 'scripts', 'import-types.sh'), join(dir, 'scripts', 'import-types.sh'));
    mkdirSync(join(dir, 'imports'));
    cpSync(join(ROOT, 'imports', 'crds'), join(dir, 'imports', 'crds'), { recursive: true });
    cpSync(join(ROOT, 'cdk8s.yaml'), join(dir, 'cdk8s.yaml'));
    cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    const r = spawnSync('bash', [join(dir, 'scripts', 'import-types.sh')], { cwd: dir, encoding: 'utf8', env: { ...process.env, CI: 'true' } });
    expect(r.status, r.stderr).toBe(0);
    // No upgrade-check stack trace (CDK8S_CHECK_UPGRADE=false).
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(readFileSync(join(dir, 'cdk8s.yaml'), 'utf8')).toBe(readFileSync(join(ROOT, 'cdk8s.yaml'), 'utf8'));
    // The same classes as the committed ones.
    const generated = readdirSync(join(dir, 'imports')).filter((f) => f.endsWith('.ts'));
    expect(generated.sort()).toEqual(['argoproj.io.ts', 'cdi.kubevirt.io.ts', 'crownlabs.polito.it.ts', 'kubevirt.io.ts']);
    for (const f of generated) expect(readFileSync(join(dir, 'imports', f), 'utf8')).toBe(readFileSync(join(ROOT, 'imports', f), 'utf8'));
    // Each API level's CrownLabs classes: the same group, so the newer level has a folder of its own.
    expect(readdirSync(join(dir, 'imports', 'e62be9e'))).toEqual(['crownlabs.polito.it.ts']);
    const e62 = join('imports', 'e62be9e', 'crownlabs.polito.it.ts');
    expect(readFileSync(join(dir, e62), 'utf8')).toBe(readFileSync(join(ROOT, e62), 'utf8'));
  });
});
