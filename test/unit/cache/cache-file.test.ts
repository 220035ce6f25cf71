import { chmodSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readOwnCacheFile, writeFileAtomically } from '../../../src/cache-file.ts';

describe('readOwnCacheFile: a cache file someone else could have written is not read', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cache-file-'));
  const file = (name: string, mode: number) => {
    const p = join(dir, name);
    writeFileSync(p, 'entry');
    chmodSync(p, mode);
    return p;
  };

  it('reads what this user wrote, and what writeFileAtomically wrote', () => {
    expect(readOwnCacheFile(file('own', 0o644))?.toString()).toBe('entry');
    expect(readOwnCacheFile(file('private', 0o600))?.toString()).toBe('entry');
    writeFileAtomically(join(dir, 'atomic'), 'written');
    expect(readOwnCacheFile(join(dir, 'atomic'))?.toString()).toBe('written');
  });

  it('skips files writable by the group or by others, symlinks, folders and missing files', () => {
    expect(readOwnCacheFile(file('world', 0o666))).toBeUndefined();
    expect(readOwnCacheFile(file('group', 0o664))).toBeUndefined();
    symlinkSync(file('target', 0o600), join(dir, 'link'));
    expect(readOwnCacheFile(join(dir, 'link'))).toBeUndefined();
    mkdirSync(join(dir, 'folder'));
    expect(readOwnCacheFile(join(dir, 'folder'))).toBeUndefined();
    expect(readOwnCacheFile(join(dir, 'missing'))).toBeUndefined();
  });
});
