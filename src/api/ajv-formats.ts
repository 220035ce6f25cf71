import type { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';

type AddFormats = (ajv: Ajv, formats?: string[]) => Ajv;

/** ajv-formats' plugin: it is CommonJS, and its default export arrives wrapped under NodeNext. */
export const addFormats: AddFormats =
  (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);
