import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS, envVarName } from '../../src/config/keys.ts';
import { USER_PODS_KEYS } from '../../src/user-pods/config.ts';
import { CONFIGURATION_PAGE, configurationPage } from '../../scripts/config-docs.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

describe('README', () => {
  it('gives the two commands and .ci/run calls the test command', () => {
    expect(README).toContain('npm ci && npm run example');
    expect(README).toContain('npm ci && npm test');
    expect(readFileSync(join(import.meta.dirname, '..', '..', '.ci', 'run'), 'utf8')).toMatch(/^npm test$/m);
  });
  it('stays short: the quick start on the first screen, the rest in docs/', () => {
    expect(Buffer.byteLength(README)).toBeLessThan(11_000);
    const firstScreen = README.split('\n').slice(0, 40).join('\n');
    expect(firstScreen).toContain('npm ci && npm run example');
    expect(firstScreen).toMatch(/\bdist\//);
  });
  it('renders the command table as one table (no paragraph splits it)', () => {
    const lines = README.split('\n');
    const start = lines.findIndex((l) => l.startsWith('| command |'));
    expect(start).toBeGreaterThan(0);
    let end = start;
    while (lines[end + 1]?.startsWith('|')) end++;
    const table = lines.slice(start, end + 1).join('\n');
    for (const cmd of ['synth', 'gitops', 'validate', 'controller', 'diff', 'imagelist', 'bastion-keys', 'ssh-tracker', 'user-pods-api', 'manifests', 'migrate']) {
      expect(table, cmd).toContain(`\`crownlabs ${cmd}`);
    }
  });
});

describe('docs/configuration.md', () => {
  const page = readFileSync(CONFIGURATION_PAGE, 'utf8');
  it('is what scripts/config-docs.ts generates from src/config/keys.ts (run `npm run config-docs`)', () => {
    expect(page).toBe(configurationPage());
  });
  it('documents every configuration key with its flag and environment variable', () => {
    for (const def of CONFIG_KEYS) {
      expect(page, def.key).toContain(`| \`${def.key}\` | ${def.flag ? `\`${def.flag}\`` : '—'} | \`${envVarName(def.key)}\` |`);
    }
  });
});

describe('docs/user-pods-api.md', () => {
  it('documents every key of the user pods API configuration', () => {
    const page = readFileSync(join(ROOT, 'docs', 'user-pods-api.md'), 'utf8');
    for (const def of USER_PODS_KEYS) expect(page, def.key).toMatch(new RegExp(`^\\| \`${def.key}\` \\|`, 'm'));
  });
});

/** Markdown lines outside fenced code blocks, with inline code spans blanked. */
function proseLines(markdown: string): string[] {
  const out: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const f = /^\s*(```|~~~)/.exec(line)?.[1];
    if (f && (fence === undefined || fence === f)) {
      fence = fence === undefined ? f : undefined;
      continue;
    }
    if (fence === undefined) out.push(line.replace(/`[^`]*`/g, (m) => ' '.repeat(m.length)));
  }
  return out;
}

/** Heading texts of a Markdown file (outside code blocks), markup removed. */
export function headings(markdown: string): string[] {
  const out: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const f = /^\s*(```|~~~)/.exec(line)?.[1];
    if (f && (fence === undefined || fence === f)) {
      fence = fence === undefined ? f : undefined;
      continue;
    }
    const m = fence === undefined ? /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line) : null;
    if (m) out.push(m[1].replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[`*]/g, ''));
  }
  return out;
}

/** GitHub's anchors of a file's headings: lower case, punctuation dropped, spaces to `-`, repeats numbered. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const h of headings(markdown)) {
    const base = h.trim().toLowerCase().replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Relative link targets of a Markdown file: `[text](target)` whose target has no URL scheme. */
export function relativeLinks(markdown: string): string[] {
  const out: string[] = [];
  for (const line of proseLines(markdown)) {
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      if (!/^[a-z][a-z0-9+.-]*:/i.test(m[1]) && !m[1].startsWith('//')) out.push(m[1]);
    }
  }
  return out;
}

/** Every problem with the relative links of `file` (a path under ROOT). */
function brokenLinks(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const problems: string[] = [];
  for (const link of relativeLinks(text)) {
    const [path, anchor] = link.split('#', 2) as [string, string | undefined];
    const target = path ? resolve(dirname(file), decodeURI(path)) : file;
    const shown = `${relative(ROOT, file)}: ${link}`;
    if (!existsSync(target)) {
      problems.push(`${shown}: no such file`);
      continue;
    }
    if (anchor !== undefined && !(statSync(target).isFile() && anchors(readFileSync(target, 'utf8')).has(decodeURIComponent(anchor)))) {
      problems.push(`${shown}: no heading with anchor #${anchor}`);
    }
  }
  return problems;
}

const DOCS = existsSync(join(ROOT, 'docs')) ? readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join(ROOT, 'docs', f)) : [];

/** The text files whose comments and strings may cite the docs. */
function citingFiles(): string[] {
  const files = [join(ROOT, 'README.md'), join(ROOT, 'main.ts'), ...DOCS];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.(ts|mts|mjs|js|sh|md)$/.test(entry.name) || entry.name === 'test-cluster') files.push(path);
    }
  };
  for (const dir of ['src', 'constructs', 'test', 'scripts', 'bench']) walk(join(ROOT, dir));
  return files.filter((f) => f !== import.meta.filename);
}

describe('documentation links', () => {
  it('has the behaviour and architecture pages, linked from the README', () => {
    expect(DOCS.map((f) => relative(ROOT, f))).toEqual(expect.arrayContaining(['docs/behaviour.md', 'docs/architecture.md']));
    expect(relativeLinks(README)).toEqual(expect.arrayContaining(['docs/behaviour.md', 'docs/architecture.md']));
  });

  it('has an index, docs/README.md, that links every page of docs/', () => {
    const index = relativeLinks(readFileSync(join(ROOT, 'docs', 'README.md'), 'utf8'));
    for (const f of DOCS.map((d) => relative(join(ROOT, 'docs'), d)).filter((f) => f !== 'README.md')) expect(index, f).toContain(f);
  });

  it('resolves every relative link of the README and docs/*.md to a file and, with #anchor, to a heading', () => {
    expect([join(ROOT, 'README.md'), ...DOCS].flatMap(brokenLinks)).toEqual([]);
  });

  it('finds anchors as GitHub makes them', () => {
    const md = '# A title\n## 7.4 VirtualMachine / CloudVM environments\n```\n# not a heading\n```\n## Dependencies — facts measured\n## A title\n';
    expect([...anchors(md)]).toEqual(['a-title', '74-virtualmachine--cloudvm-environments', 'dependencies--facts-measured', 'a-title-1']);
    expect(relativeLinks('[x](a.md#b) `[y](c.md)` [z](https://e.org/) [w](#here)\n```\n[v](d.md)\n```\n')).toEqual(['a.md#b', '#here']);
  });
});

describe('references from the code to docs/', () => {
  const behaviour = readFileSync(join(ROOT, 'docs', 'behaviour.md'), 'utf8');
  const architecture = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const sections = new Set(headings(behaviour).flatMap((h) => /^(\d+(?:\.\d+)*)\.?\s/.exec(h)?.[1] ?? []));
  const decisions = new Set(headings(behaviour).flatMap((h) => /^Decision (\d+)\b/.exec(h)?.[1] ?? []));
  const architectureHeadings = new Set(headings(architecture));
  const files = citingFiles();
  const each = (re: RegExp, check: (m: RegExpMatchArray) => string | undefined): string[] =>
    files.flatMap((f) => [...readFileSync(f, 'utf8').matchAll(re)].flatMap((m) => check(m) ?? []).map((p) => `${relative(ROOT, f)}: ${p}`));

  it('every § section cited (e.g. "docs/behaviour.md §7.4", "§5.4 row 9") is a heading of docs/behaviour.md', () => {
    expect(sections.size).toBeGreaterThan(60);
    expect(each(/§(\d+(?:\.\d+)*)/g, (m) => (sections.has(m[1]) ? undefined : `§${m[1]} is not a section`))).toEqual([]);
  });

  it('every "Decision N" cited is a heading of docs/behaviour.md', () => {
    expect([...decisions].sort()).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9']);
    expect(each(/\bDecision (\d+)\b/g, (m) => (decisions.has(m[1]) ? undefined : `Decision ${m[1]} does not exist`))).toEqual([]);
  });

  it('every docs/architecture.md, "X" cited is a heading of docs/architecture.md', () => {
    const cited = each(/docs\/architecture\.md, "([^"]+)"/g, (m) => (architectureHeadings.has(m[1]) ? undefined : `"${m[1]}" is not a heading`));
    expect(cited).toEqual([]);
    for (const h of ['Conventions', 'Secrets', 'The apply-controller']) expect(architectureHeadings, h).toContain(h);
  });

  it('nothing cites the SPEC or DESIGN files, which are not in the repository', () => {
    // Built from parts so that this file does not match itself.
    const gone = new RegExp(['SPEC(?:\\.md)?,?\\s*(?:§|Decision)', 'DESIGN\\.md', '\\.\\./shared/'].join('|'), 'g');
    expect(each(gone, (m) => `cites ${m[0]}`)).toEqual([]);
  });
});
