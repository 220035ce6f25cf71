import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';

// What the commands tell V8 (node:v8 is process-wide: the test records the call instead).
const setFlags = vi.hoisted(() => vi.fn());
vi.mock('node:v8', async (original) => ({ ...(await original<typeof import('node:v8')>()), setFlagsFromString: setFlags }));

const { applyHeapGrowth, givenHeapGrowth, HEAP_GROWING_PERCENT } = await import('../../../src/cli/heap-growth.ts');
const { registerController } = await import('../../../src/cli/controller.ts');
const { registerSynth } = await import('../../../src/cli/synth.ts');
const { registerGitops } = await import('../../../src/cli/gitops.ts');
const { registerValidate } = await import('../../../src/cli/validate.ts');

afterEach(() => {
  setFlags.mockClear();
  process.exitCode = undefined;
});

/** Runs one command in this process, its output swallowed. */
async function run(register: (p: Command) => void, args: string[]): Promise<void> {
  const program = new Command().exitOverride();
  register(program);
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  try {
    await program.parseAsync(['node', 'crownlabs', ...args]);
  } finally {
    stderr.mockRestore();
    stdout.mockRestore();
  }
}

describe('the heap growth of long or large runs (src/cli/heap-growth.ts)', () => {
  it('sets a fixed growth when node was started without the flag', () => {
    expect(applyHeapGrowth(20, ['--expose-gc'])).toBe(true);
    expect(setFlags).toHaveBeenCalledWith('--heap-growing-percent=20');
  });

  it("leaves node's own flag alone, in either spelling", () => {
    for (const argv of [['--heap-growing-percent=50'], ['--heap_growing_percent=50'], ['--max-semi-space-size=4', '--heap-growing-percent', '50']]) {
      expect(applyHeapGrowth(20, argv)).toBe(false);
      expect(givenHeapGrowth(argv)).toBe('50');
    }
    expect(givenHeapGrowth(['--heap-growing-percent-x=5', '--expose-gc'])).toBeUndefined();
    expect(setFlags).not.toHaveBeenCalled();
  });

  it('`crownlabs controller` sets its own before anything else, even a run that stops at its flags', async () => {
    await run(registerController, ['controller', '--max-concurrent-reconciles', '0']);
    expect(process.exitCode).toBe(2);
    expect(setFlags).toHaveBeenCalledWith(`--heap-growing-percent=${HEAP_GROWING_PERCENT.controller}`);
  });

  it('synth and gitops set the render value, gitops --watch the watch value; validate leaves V8 its own', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'heap-growth-'));
    try {
      const missing = path.join(dir, 'no-such-lab');
      for (const [register, name] of [[registerSynth, 'synth'], [registerGitops, 'gitops']] as const) {
        setFlags.mockClear();
        await run(register, [name, '-f', missing, '-o', path.join(dir, name)]);
        expect(setFlags, name).toHaveBeenCalledWith(`--heap-growing-percent=${HEAP_GROWING_PERCENT.render}`);
      }
      // Watch mode runs long, as the controller: its own value (the load fails here, before watching).
      setFlags.mockClear();
      await run(registerGitops, ['gitops', '-f', missing, '-o', path.join(dir, 'watched'), '--watch']);
      expect(process.exitCode).not.toBe(0);
      expect(setFlags).toHaveBeenCalledWith(`--heap-growing-percent=${HEAP_GROWING_PERCENT.watch}`);
      expect(setFlags).toHaveBeenCalledTimes(1);
      setFlags.mockClear();
      await run(registerValidate, ['validate', '-f', missing]);
      expect(process.exitCode).not.toBe(0);
      expect(setFlags).not.toHaveBeenCalled();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
