import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../src/cli/main.ts';
import { CONFIG, crownlabs, LAB } from '../../support/cli.ts';

afterEach(() => {
  process.exitCode = undefined;
});

/** Runs the CLI in this process: its exit code and what it wrote to stderr. */
async function cli(args: string[]): Promise<{ code: number; stderr: string; stdout: string }> {
  let stderr = '';
  let stdout = '';
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((s) => ((stderr += String(s)), true));
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((stdout += String(s)), true));
  try {
    const code = await main(['node', 'crownlabs', ...args]);
    return { code, stderr, stdout };
  } finally {
    err.mockRestore();
    out.mockRestore();
    process.exitCode = undefined;
  }
}

describe('numeric flags refuse what is out of range, naming the flag and the range (exit 2)', () => {
  const refused: [args: string[], flag: RegExp, range: string][] = [];
  for (const bad of ['0', '-3', 'abc', '1.5', '65', '1e12']) {
    refused.push([['synth', '-f', LAB, '--stdout', '-j', bad], /'-j, --jobs <n>'/, 'from 1 to 64']);
    refused.push([['gitops', '-f', LAB, '-j', bad], /'-j, --jobs <n>'/, 'from 1 to 64']);
    refused.push([['validate', '-f', LAB, '-j', bad], /'-j, --jobs <n>'/, 'from 1 to 64']);
  }
  for (const bad of ['-1', 'abc', '0', '1e12', '60001'])
    refused.push([['gitops', '-f', LAB, '--watch', '--debounce', bad], /'--debounce <ms>'/, 'from 1 to 60000']);
  const imagelist = ['imagelist', '--advertised-registry-name', 'a', '--image-list-name', 'l', '--registry-url', 'http://r'];
  for (const bad of ['0', '-1', 'abc', '1.5', '1e12']) {
    refused.push([[...imagelist, '--update-interval', bad], /--update-interval/, 'from 1 to 604800']);
    refused.push([[...imagelist, '--once', '--registry-timeout', bad], /--registry-timeout/, 'from 1 to 3600']);
    refused.push([[...imagelist, '--once', '--page-size', bad], /--page-size/, 'from 1 to 10000']);
    refused.push([['controller', '--max-concurrent-reconciles', bad], /--max-concurrent-reconciles/, 'from 1 to 1000']);
    refused.push([['controller', '--client-max-burst', bad], /--client-max-burst/, 'from 1 to 100000']);
  }
  for (const bad of ['-1', 'abc', '1e12', '100001']) refused.push([['controller', '--client-qps', bad], /--client-qps/, 'from 0 to 100000']);

  it.each(refused)('crownlabs %j', async (args, flag, range) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(flag);
    expect(r.stderr).toContain(range);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('the values in range are taken: a synth with -j 2 renders', () => {
    const r = crownlabs(['synth', '-f', LAB, '--config', CONFIG, '--stdout', '-j', '2', '-q']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('kind: VirtualMachineInstance');
  });
});

describe('an unknown command is a usage error whatever follows it', () => {
  it.each([[['sytnh', '--help']], [['sytnh', '-h']], [['sytnh', '--version']], [['gitopz', '-f', LAB, '--help']]])('crownlabs %j: exit 2 with a did-you-mean', async (args) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(new RegExp(`^error: unknown command '${args[0]}' \\(Did you mean (synth|gitops)\\?\\)\\nsee 'crownlabs --help'\\n$`));
  });

  it('a known command with --help still prints its help and exits 0', async () => {
    const r = await cli(['synth', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: crownlabs synth/);
  });
});
