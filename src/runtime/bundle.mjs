// Plain JavaScript (no loader needed): bin/crownlabs.js imports it before any TypeScript runs.
import { createHash } from 'node:crypto';
import { createRequire, isBuiltin } from 'node:module';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from './package-root.mjs';

/** The folders the product's modules come from: a change in any of them makes a new bundle. */
export const SOURCE_DIRS = ['src', 'constructs', 'imports'];

const made = new Map();

/**
 * Package modules bundled (and tree-shaken) into the bundle instead of loaded from node_modules.
 * client-node's KubeConfig module: its package index loads every generated API client and model,
 * ~77 MB of RSS in a process; the config module bundled alone costs ~28 MB (bench/RESULTS.md).
 */
const INLINED = new Set(['@kubernetes/client-node/dist/config.js']);

/**
 * Every other package (a bare specifier) stays external, as esbuild's `packages: 'external'`. An
 * inlined module's own packages (node-fetch, hpagent…) then load from the root's node_modules: right
 * only where npm hoisted the very copies the module would load. `unsafe` records where that is not
 * so (a nested other version, or none at the root), and the bundle is made again without inlining.
 */
function externalPackages(root, inlined) {
  const fromRoot = createRequire(join(root, 'package.json'));
  const state = { unsafe: [] };
  const plugin = {
    name: 'external-packages',
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (a) => {
        if (inlined.has(a.path)) return undefined;
        // Only an inlined module's files are bundled from node_modules.
        if (!isBuiltin(a.path) && a.importer.includes(`${sep}node_modules${sep}`)) {
          const own = resolvedOrNull(createRequire(a.importer), a.path);
          if (own === null || own !== resolvedOrNull(fromRoot, a.path)) state.unsafe.push(a.path);
        }
        return { path: a.path, external: true };
      });
    },
  };
  return { plugin, state };
}

function resolvedOrNull(req, specifier) {
  try {
    return req.resolve(specifier);
  } catch {
    return null;
  }
}

/**
 * A TypeScript entry module and everything it imports from `dirs`, bundled by esbuild into one
 * ES module in `<root>/.cache/` (packages stay external and load from node_modules). The file name
 * carries a hash of the sources, so a bundle is made once per version of them and reused by every
 * later process. Node then loads plain JavaScript: measured against tsx's per-module transform,
 * about 120 MB less memory and seconds less start-up (bench/RESULTS.md). Throws when esbuild or
 * a writable `.cache/` is missing; callers fall back to tsx.
 */
export function bundledEntry(entry, dirs = SOURCE_DIRS, root = packageRoot()) {
  const key = `${root}\0${entry}\0${dirs.join(',')}`;
  let p = made.get(key);
  if (!p) {
    p = makeBundle(root, entry, dirs);
    made.set(key, p);
  }
  return p;
}

async function makeBundle(root, entry, dirs) {
  const name = basename(entry).replace(/\.[cm]?ts$/, '');
  const dir = join(root, '.cache');
  const file = join(dir, `${name}-${sourcesHash(root, entry, dirs)}.mjs`);
  if (!existsSync(file)) {
    const { build } = await import('esbuild');
    const bundle = (inlined) => {
      const external = externalPackages(root, inlined);
      return build({
        entryPoints: [join(root, entry)],
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        write: false,
        logLevel: 'silent',
        // The lazy packages' facades load them through this (require of an ES module: Node ≥ 20.19).
        banner: { js: "import { createRequire as __crownlabsCreateRequire } from 'node:module'; const __crownlabsRequire = __crownlabsCreateRequire(import.meta.url);" },
        // First match wins: the lazy facades, then every other package external (the inlined module aside).
        plugins: [lazyPackages(root), external.plugin],
      }).then((result) => ({ result, unsafe: external.state.unsafe }));
    };
    let { result, unsafe } = await bundle(INLINED);
    if (unsafe.length > 0) ({ result } = await bundle(new Set()));
    mkdirSync(dir, { recursive: true });
    // A temp file and a rename: a process starting meanwhile sees the whole bundle or none.
    const tmp = `${file}.tmp-${process.pid}`;
    writeFileSync(tmp, result.outputFiles[0].text);
    renameSync(tmp, file);
    const stale = new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-[0-9a-f]{16}\\.mjs$`);
    for (const old of readdirSync(dir)) if (stale.test(old) && join(dir, old) !== file) rmSync(join(dir, old), { force: true });
  }
  return pathToFileURL(file);
}

/**
 * Packages only some commands or paths use, and costly to load: @kubernetes/client-node takes ~0.7
 * CPU-s and ~60 MB at every start (measured: bench/RESULTS.md), though synth, gitops and validate
 * never call it; cdk8s and cdk8s-plus-27 ~0.3 CPU-s, needed only when a set is rendered (not on a
 * replayed run, src/cache/run-record.ts); ajv and the YAML parsers only when an input is parsed.
 * In a bundle each becomes a facade whose exports load the package on first use (its CommonJS
 * build, through require). The CLI loads each command's modules only when it runs (src/cli/main.ts),
 * so a class extending a package's class loads that package only then.
 */
export const LAZY_PACKAGES = [
  '@kubernetes/client-node',
  'cdk8s',
  // Its L1 classes only (the constructs import no L2 one): its index loads the whole L2 library too.
  'cdk8s-plus-27/lib/imports/k8s.js',
  'constructs',
  'ajv',
  'ajv-formats',
  'yaml',
  'js-yaml',
  'fast-json-patch',
  'prom-client',
  'pino',
  'chokidar',
  'cli-progress',
  // What client-node's KubeConfig module imports for OIDC, exec credentials and proxies only: ~25 MB
  // of RSS in every controller (openid-client, the proxy agents), loaded on first use. Not
  // node-fetch: client-node's API clients call it, default-imported from an ES module, which then
  // gets the facade's exports object itself (Node's CommonJS interop), not node-fetch's function.
  // A callable package stays lazy only where it is imported by name (ajv: `import { Ajv }`).
  'openid-client',
  'socks-proxy-agent',
  'hpagent',
  'jsonpath-plus',
  'rfc4648',
];

function lazyPackages(root) {
  return {
    name: 'crownlabs-lazy-packages',
    setup(build) {
      const filter = new RegExp(`^(${LAZY_PACKAGES.map((p) => p.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|')})$`);
      const fromRoot = createRequire(join(root, 'package.json'));
      build.onResolve({ filter }, (args) => {
        // A facade loads the root's copy: an inlined module that would load another copy is left
        // to the external-packages plugin (which then bundles without inlining).
        if (args.importer.includes(`${sep}node_modules${sep}`) && resolvedOrNull(createRequire(args.importer), args.path) !== resolvedOrNull(fromRoot, args.path)) return undefined;
        return { path: args.path, namespace: 'crownlabs-lazy' };
      });
      build.onLoad({ filter: /.*/, namespace: 'crownlabs-lazy' }, (args) => {
        // The export names, read once per bundle (a CommonJS facade: esbuild reads its exports through getters).
        const names = Object.keys(createRequire(join(root, 'package.json'))(args.path));
        const contents = `let m; const load = () => (m ??= __crownlabsRequire(${JSON.stringify(args.path)}));
for (const k of ${JSON.stringify(names)}) Object.defineProperty(exports, k, { enumerable: true, get: () => load()[k] });`;
        return { contents, loader: 'js' };
      });
    },
  };
}

/** Names and contents of the TypeScript files under `dirs`, and how the bundle is made. */
export function sourcesHash(root, entry, dirs) {
  const h = createHash('sha256').update(`bundle-v4 ${process.version} ${entry}\n`);
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(d, e.name);
      if (e.isDirectory()) walk(path);
      else if (/\.m?[jt]s$/.test(e.name)) h.update(`${relative(root, path)}\0`).update(readFileSync(path)).update('\0');
    }
  };
  for (const d of dirs) walk(join(root, d));
  return h.digest('hex').slice(0, 16);
}

/** The CLI: every command, the controller included. */
export const CLI_ENTRY = 'src/cli/main.ts';
/** The render worker of `-j N`. */
export const RENDER_WORKER_ENTRY = 'src/sinks/parallel/render-worker.ts';
/** The validation thread of `validate`. */
export const VALIDATE_WORKER_ENTRY = 'src/validate/validate-worker.ts';
/** The product's entry modules (what `npm run build` bundles ahead of time). */
export const PRODUCT_ENTRIES = [CLI_ENTRY, RENDER_WORKER_ENTRY, VALIDATE_WORKER_ENTRY];

