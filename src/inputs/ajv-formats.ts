import type { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';

type AddFormats = (ajv: Ajv, formats?: string[]) => Ajv;

/**
 * ajv-formats' plugin: it is CommonJS, and its default export arrives wrapped under NodeNext.
 * Looked up on the first call: in the bundle the package loads only then (src/runtime/bundle.mjs).
 */
export const addFormats: AddFormats = (ajv, formats) => {
  const add = (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);
  return add(ajv, formats);
};
