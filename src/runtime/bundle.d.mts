export declare const SOURCE_DIRS: string[];
/** See bundle.mjs: the file URL of an esbuild bundle of `entry` (relative to `root`), made once per version of the sources. */
export declare function bundledEntry(entry: string, dirs?: string[], root?: string): Promise<URL>;
export declare const CLI_ENTRY: string;
export declare const RENDER_WORKER_ENTRY: string;
export declare const VALIDATE_WORKER_ENTRY: string;
export declare const PRODUCT_ENTRIES: string[];
/** Packages the bundle loads on first use, behind a facade of getters. */
export declare const LAZY_PACKAGES: string[];
export function sourcesHash(root: string, entry: string, dirs: readonly string[]): string;
