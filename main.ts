// The cdk8s app (cdk8s.yaml): `cdk8s synth` renders the example lab into dist/ through the same
// composition as `crownlabs synth`, and the `platform` chart (the install, as `crownlabs manifests`)
// into dist/platform.yaml. Each resource set is its own App (synthesis stays linear), so
// this writes the files itself instead of calling app.synth().
import { join } from 'node:path';
import { loadInventory } from './src/inputs/load.ts';
import { formatProblem, hasErrors } from './src/inputs/problems.ts';
import { compose, renderAll } from './src/compose/compose.ts';
import { loadConfig } from './src/config/config.ts';
import { packageRoot } from './src/runtime/package-root.mjs';
import { renderPlatform } from './src/platform/install.ts';
import { OutputError, writeTreeAtomically } from './src/sinks/atomic-tree.ts';
import { distFiles } from './src/sinks/files.ts';
import { objectsToYaml } from './src/sinks/yaml-emitter.ts';
import { checkRenderedSets, parentSource } from './src/compose/prewrite.ts';

const root = packageRoot();
const input = process.env.CROWNLABS_INPUT ?? join(root, 'examples', 'lab');
const configFile = process.env.CROWNLABS_CONFIG ?? join(root, 'examples', 'crownlabs.config.yaml');
const outdir = process.env.CDK8S_OUTDIR ?? join(root, 'dist');

const { config, problems: configProblems } = loadConfig({ file: configFile, env: process.env });
const { inventory, problems } = loadInventory([input]);
const composition = compose(inventory, config);
const all = [...configProblems, ...problems, ...composition.problems];
for (const p of all) process.stderr.write(`${formatProblem(p)}\n`);
if (hasErrors(all)) process.exit(1);
const sets = renderAll(composition);
// The pre-write checks of `crownlabs synth`: invalid names and labels, two inputs rendering one object.
const rendered = checkRenderedSets(sets, (p) => parentSource(inventory, p));
for (const p of rendered) process.stderr.write(`${formatProblem(p)}\n`);
if (hasErrors(rendered)) process.exit(1);
try {
  writeTreeAtomically(outdir, new Map([...distFiles(sets), ['platform.yaml', objectsToYaml(renderPlatform(config))]]), { inputs: [input, configFile] });
} catch (err) {
  // A refused output folder (not ours, overlapping the inputs): one line, as `crownlabs synth` says it.
  if (!(err instanceof OutputError)) throw err;
  process.stderr.write(`${outdir}: error: ${err.message}\n`);
  process.exit(1);
}
process.stderr.write(`${sets.length} resource sets and the platform chart → ${outdir}\n`);
