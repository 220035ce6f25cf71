import { Command } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';

// What the controller tells V8 (node:v8 is process-wide: the test records the call instead).
const setFlags = vi.hoisted(() => vi.fn());
vi.mock('node:v8', async (original) => ({ ...(await original<typeof import('node:v8')>()), setFlagsFromString: setFlags }));

const { applyControllerHeapGrowth, CONTROLLER_HEAP_GROWING_PERCENT } = await import('../../../src/controller/heap-growth.ts');
const { registerController } = await import('../../../src/cli/controller.ts');

afterEach(() => {
  setFlags.mockClear();
  process.exitCode = undefined;
});

describe('the controller heap growth (src/controller/heap-growth.ts)', () => {
  it('sets a fixed growth when node was started without the flag', () => {
    expect(applyControllerHeapGrowth(['--expose-gc'])).toBe(true);
    expect(setFlags).toHaveBeenCalledWith(`--heap-growing-percent=${CONTROLLER_HEAP_GROWING_PERCENT}`);
  });

  it("leaves node's own flag alone, in either spelling", () => {
    for (const argv of [['--heap-growing-percent=50'], ['--heap_growing_percent=50'], ['--max-semi-space-size=4', '--heap-growing-percent', '50']]) {
      expect(applyControllerHeapGrowth(argv)).toBe(false);
    }
    expect(setFlags).not.toHaveBeenCalled();
  });

  it('`crownlabs controller` sets it before anything else, even a run that stops at its flags', async () => {
    const program = new Command().exitOverride();
    registerController(program);
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      await program.parseAsync(['node', 'crownlabs', 'controller', '--max-concurrent-reconciles', '0']);
    } finally {
      stderr.mockRestore();
    }
    expect(process.exitCode).toBe(2);
    expect(setFlags).toHaveBeenCalledWith(`--heap-growing-percent=${CONTROLLER_HEAP_GROWING_PERCENT}`);
  });
});
