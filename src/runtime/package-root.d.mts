/** See package-root.mjs: the folder holding package.json and imports/crds. */
export declare function packageRoot(): string;
