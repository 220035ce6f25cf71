// fast-check arbitraries shared by the fuzzers: hostile strings and values, and document cases.
import fc from 'fast-check';
import { BASE_NAMES } from './corpus.ts';
import type { DocCase, EnvironmentSettings, Json, ObjectOp, TextOp, TextValue, Value } from './doc-case.ts';

/** Characters that parsers, terminals and YAML treat specially. */
export const SPECIAL_CHARS = [
  '\0', '\x07', '\b', '\t', '\n', '\v', '\f', '\r', '\x1b', '\x7f',
  '\u0085', '\u2028', '\u2029', // NEL, LS, PS: line breaks to YAML 1.1, not to 1.2
  '\ufeff', '\u200b', '\u200d', '\u202e', '\u2066', // BOM, zero widths, bidi overrides
  '\ud800', '\udfff', // lone surrogates
  '\ufffd', '\uffff', '😀', '👩‍👩‍👧', 'é', 'e\u0301', 'İ', 'ß', 'ﬁ', 'Ω', '中', 'ا',
];

/** Words and fragments YAML (1.1 or 1.2) or a shell read as something else. */
export const YAMLISH = [
  '', ' ', 'null', 'Null', '~', 'true', 'False', 'yes', 'No', 'on', 'OFF', 'y', 'n',
  '0', '-0', '007', '0o17', '0x1F', '0b101', '1e3', '1_000', '+.inf', '-.Inf', '.nan', '12:30:00', '190:20:30',
  '2001-12-14', '2001-12-14t21:59:43.10-05:00', '<<', '=', '&a', '*a', '!!binary', '!!python/object:os.system', '!local',
  '%YAML 1.1', '---', '...', '- x', '? x', ': x', 'a: b', 'a #b', '#c', '|', '>-', '{', '}', '[', ']', ',', '"', "'", '@x', '`x`',
  'a\n- b', 'key:\n  nested: 1', '$(reboot)', '`id`', '${HOME}', '../../etc/passwd', '/dev/zero', 'C:\\x', '%00', '\\u0000',
  'runcmd:\n- touch /tmp/pwned', 'x\u0085runcmd:\u0085- touch /tmp/pwned', 'ssh-ed25519 AAAA x\u2028- ssh-rsa AAAAevil',
];

const specialChar = fc.constantFrom(...SPECIAL_CHARS);

/** Hostile strings: special words, special characters mixed into text, random unicode. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...YAMLISH, ...SPECIAL_CHARS) },
  { weight: 3, arbitrary: fc.tuple(fc.string({ maxLength: 12 }), specialChar, fc.string({ maxLength: 12 })).map(([a, b, c]) => a + b + c) },
  { weight: 2, arbitrary: fc.array(fc.oneof(specialChar, fc.constantFrom(...YAMLISH), fc.string({ maxLength: 4 })), { maxLength: 6 }).map((p) => p.join('')) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.stringMatching(/^[a-z0-9]([-a-z0-9.]{0,30}[a-z0-9])?$/) },
);

/** A value of any JSON type (for type swaps), hostile strings and numbers included. */
export const anyJson: fc.Arbitrary<Json> = fc.letrec<{ v: Json }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    nastyString,
    fc.integer(),
    fc.constantFrom(0, -1, 2 ** 31, 2 ** 53 + 1, -(2 ** 63), 1e21, 1e-7, 0.1, 63, 64, 65535, 65536),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(nastyString, tie('v'), { maxKeys: 3 }),
  ),
})).v;

/** anyJson, or a marker the case expands to a huge string or a deep nesting. */
export const anyValue: fc.Arbitrary<Value> = fc.oneof(
  { weight: 12, arbitrary: anyJson },
  { weight: 1, arbitrary: fc.record({ $huge: fc.constantFrom(300, 4096, 70_000, 1_000_000), ch: fc.constantFrom('a', 'é', '\u2028', ' ', '😀') }) },
  { weight: 1, arbitrary: fc.record({ $deep: fc.constantFrom(50, 500, 3000), as: fc.constantFrom('list' as const, 'map' as const) }) },
);

const nat = fc.nat({ max: 10_000 });
/** An unknown field name: never a real one (they all start otherwise), sometimes not ASCII. */
export const unknownKey = fc.tuple(fc.constantFrom('fuzz', 'fuzzé', 'fuzz_', 'fuzz-'), fc.stringMatching(/^[a-zA-Z0-9]{0,8}$/)).map(([a, b]) => a + b);

/** Valid environment settings, some left as they are: every combination of type, mode and GUI is reachable. */
const environmentSettings: fc.Arbitrary<EnvironmentSettings> = fc.record(
  {
    environmentType: fc.constantFrom('VirtualMachine' as const, 'CloudVM' as const, 'Container' as const, 'Standalone' as const),
    mode: fc.constantFrom('Standard' as const, 'Exam' as const, 'Exercise' as const),
    guiEnabled: fc.boolean(),
    persistent: fc.boolean(),
    rewriteURL: fc.boolean(),
    mountMyDriveVolume: fc.boolean(),
  },
  { requiredKeys: [] },
);

/** Quantities at the edges: zero, one byte, fractions, exponents, 2^63 bytes (8Ei), beyond int64, negative. */
const edgeQuantity = fc.constantFrom<string | number>(
  0, 1, 2, 64, 0.5, -1, '0', '1', '1m', '100m', '0.5', '1Ki', '1Mi', '1Gi', '1G', '2Gi', '1.5Gi', '1e3', '1E', '1Ei', '7Ei', '8Ei', '9223372036854775807',
  '9223372036854775808', '99999999999999999999Gi', '1000000Ti', '-1Gi', '0Gi', '.5Gi', '1e-3',
);

export const environmentOp: fc.Arbitrary<ObjectOp> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant('environment' as const), env: nat, settings: environmentSettings }) },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('resource' as const), env: nat, field: fc.constantFrom('cpu' as const, 'memory' as const, 'disk' as const, 'reservedCPUPercentage' as const), value: edgeQuantity }),
  },
);

export const objectOp: fc.Arbitrary<ObjectOp> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('delete' as const), doc: nat, at: nat }) },
  { weight: 6, arbitrary: fc.record({ op: fc.constant('set' as const), doc: nat, at: nat, value: anyValue }) },
  { weight: 6, arbitrary: fc.record({ op: fc.constant('setString' as const), doc: nat, at: nat, value: nastyString }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('renameKey' as const), doc: nat, at: nat, key: nastyString }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('unknownField' as const), doc: nat, where: fc.constantFrom('root' as const, 'spec' as const), key: unknownKey, value: anyJson }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('clone' as const), doc: nat, rename: fc.constantFrom('same' as const, 'dotdash' as const, 'suffix' as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('longName' as const), doc: nat, length: fc.constantFrom(40, 52, 58, 63, 64, 100, 253, 254, 1000) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('deleteDoc' as const), doc: nat }) },
  { weight: 3, arbitrary: environmentOp },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('namespace' as const),
      doc: nat,
      value: fc.constantFrom('..', '.', '../x', '../../../x', 'a/b', '/abs', 'tenant-john-doe/../x', 'Tenant-John-Doe', 'tenant_john', 'x'.repeat(64), '', ' tenant-john-doe'),
    }),
  },
);

const textValue: fc.Arbitrary<TextValue> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constantFrom('plain' as const, 'double' as const, 'single' as const), text: nastyString }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'unresolved-alias' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'anchor-alias' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('bomb' as const), width: fc.integer({ min: 2, max: 10 }), depth: fc.integer({ min: 1, max: 10 }), as: fc.constantFrom('list' as const, 'map' as const) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('recursive-alias' as const), as: fc.constantFrom('list' as const, 'map' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deep' as const), depth: fc.constantFrom(10, 200, 2000, 20_000), as: fc.constantFrom('list' as const, 'map' as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('huge' as const),
      // Over a megabyte now and then: past a reader's size cap, but each costs ~1 s to check.
      size: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(1000, 70_000) }, { weight: 1, arbitrary: fc.constant(1_100_000) }),
      ch: fc.constantFrom('a', '\u0085', '😀'),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('tag' as const),
      tag: fc.constantFrom('!!binary', '!!set', '!!omap', '!!pairs', '!!timestamp', '!!int', '!!float', '!!bool', '!!null', '!!str', '!!map', '!!seq', '!!js/function', '!!python/object/apply:os.system', '!local', '!<tag:x,2000:y>'),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'merge-key' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('number' as const), text: fc.constantFrom('.nan', '.inf', '-.inf', '1e999', '-1e999', '0x10', '0o10', '010', '1_0', '9'.repeat(400), '-0', '1.', '.5', '+1', '1:30') }) },
);

/** Byte sequences that are not UTF-8: stray continuation, truncated, overlong, surrogate, > U+10FFFF. */
const invalidUtf8 = fc.constantFrom([0xff], [0xfe, 0xff], [0x80], [0xc3], [0xe2, 0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]);

export const textOp: fc.Arbitrary<TextOp> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant('insert' as const), file: nat, at: nat, text: nastyString }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('insertBytes' as const), file: nat, at: nat, bytes: fc.oneof(invalidUtf8, fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 8 })) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('cut' as const), file: nat, at: nat, length: fc.integer({ min: 1, max: 40 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('dupLine' as const), file: nat, line: nat }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('swapLines' as const), file: nat, a: nat, b: nat }) },
  { weight: 8, arbitrary: fc.record({ op: fc.constant('value' as const), file: nat, line: nat, value: textValue }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('sibling' as const), file: nat, line: nat, key: fc.constantFrom('fuzz', 'x-fuzz', '<<', '? fuzz', '"fuzz"', 'fuzz é'), value: textValue }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('truncate' as const), file: nat, at: nat }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('whole' as const),
      file: nat,
      how: fc.constantFrom('crlf' as const, 'cr' as const, 'bom' as const, 'tabs' as const, 'nel-breaks' as const, 'ls-breaks' as const, 'yaml11-directive' as const, 'empty' as const, 'comment-only' as const, 'doc-end-markers' as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('extraFile' as const),
      name: fc.constantFrom('zz-fuzz.yaml', 'zz-fuzz.yml', 'zz-fuzz.json', '.hidden.yaml', 'zz-fuzz.txt', 'sub dir é.yaml'),
      content: fc.oneof(nastyString, fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 64 }), fc.constantFrom('---\n---\n', '[]', '{}', 'null', '- 1\n- 2\n', 'kind: List\napiVersion: v1\nitems: [1, null, {kind: Tenant}]\n')),
    }),
  },
);

const base = fc.constantFrom(...BASE_NAMES);
const config = fc.nat({ max: 2 });
const style = fc.constantFrom('yaml' as const, 'json' as const);

/** Object-level edits only (a few), files written back as YAML or JSON. */
export const objectCase: fc.Arbitrary<DocCase> = fc.record({
  base,
  config,
  style,
  objectOps: fc.oneof({ weight: 3, arbitrary: fc.tuple(objectOp) }, { weight: 2, arbitrary: fc.array(objectOp, { minLength: 2, maxLength: 4 }) }),
  textOps: fc.constant([]),
});

/** One unknown field, nothing else: the reader must reject it and name it. */
export const unknownFieldCase: fc.Arbitrary<DocCase> = fc.record({
  base,
  config,
  style,
  objectOps: fc.tuple(fc.record({ op: fc.constant('unknownField' as const), doc: nat, where: fc.constantFrom('root' as const, 'spec' as const), key: unknownKey, value: anyJson })),
  textOps: fc.constant([]),
});

/** Text-level edits (a few) of the files as written, sometimes on top of an object edit. */
export const textCase: fc.Arbitrary<DocCase> = fc.record({
  base,
  config,
  style,
  objectOps: fc.oneof({ weight: 4, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(objectOp, { maxLength: 1 }) }),
  textOps: fc.array(textOp, { minLength: 1, maxLength: 3 }),
});

/** A billion laughs as a new field in metadata: nothing reads it, and it must still not hang a reader. */
const bombSibling: fc.Arbitrary<TextOp> = fc.record({
  op: fc.constant('sibling' as const),
  file: nat,
  line: nat,
  key: fc.constantFrom('fuzz', 'x-fuzz'),
  value: fc.record({ kind: fc.constant('bomb' as const), width: fc.integer({ min: 8, max: 10 }), depth: fc.integer({ min: 8, max: 10 }), as: fc.constantFrom('list' as const, 'map' as const) }),
  beside: fc.constant('metadata' as const),
});

/** Watch mode's cases: text edits, and more often than elsewhere an alias bomb (#14.12 hung watch mode). */
export const watchCase: fc.Arbitrary<DocCase> = fc.oneof(
  { weight: 9, arbitrary: textCase },
  { weight: 1, arbitrary: fc.record({ base, config, style, objectOps: fc.constant([]), textOps: fc.tuple(bombSibling) }) },
);
