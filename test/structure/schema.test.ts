// Proves that engine/bus/codec.ts and the FlatBuffers-generated code (schemas/generated/) agree on
// every byte of every struct in schemas/exchange.fbs:
// - the committed generated code is exactly what the schema generates;
// - the codec's size/offset constants equal the generated layout;
// - for every struct and every field: codec write -> generated read, generated write (Builder +
//   createX) -> codec read, and codec bytes == Builder bytes (padding included).
// The field lists are parsed from exchange.fbs itself, so a field added to the schema but not to
// the codec (or to engine/bus/types.ts) fails here. The codec and the record interfaces are
// themselves generated from the schema (engine/bus/generated/), so this also proves the generator;
// the kind table it generates (command kinds, size tables, enum names, scratch records) is checked
// against flatc's enums and sizes below.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as flatbuffers from 'flatbuffers';
import * as G from '../../schemas/generated/exchange/schema.js';
import * as codec from '../../engine/bus/codec.js';
import * as kinds from '../../engine/bus/generated/kinds.js';
import { newCommand, newCommandSlot, resetCommand, RecordType } from '../../engine/bus/types.js';
import { prng } from '../helpers/engine-harness.js';

// ---------------------------------------------------------------------------------------------
// The schema, parsed (comments stripped; structs and enums only).

const fbs = readFileSync(new URL('../../schemas/exchange.fbs', import.meta.url), 'utf8').replace(/\/\/.*$/gm, '');

const enums = new Map<string, { base: string; values: number[] }>();
for (const m of fbs.matchAll(/enum\s+(\w+)\s*:\s*(\w+)\s*\{([^}]*)\}/g)) {
  const values = [...m[3].matchAll(/\w+\s*=\s*(\d+)/g)].map((v) => Number(v[1]));
  enums.set(m[1], { base: m[2], values });
}
const structs = new Map<string, { name: string; type: string }[]>();
// A struct with attributes is a (store) struct, an LMDB history value in big-endian byte order
// that flatc's accessors do not read: test/hostile/history-values.test.ts holds those to their bytes.
for (const m of fbs.matchAll(/struct\s+(\w+)\s*\{([^}]*)\}/g)) {
  structs.set(
    m[1],
    [...m[2].matchAll(/(\w+)\s*:\s*(\w+)\s*;/g)].map((f) => ({ name: f[1], type: f[2] })),
  );
}

interface Leaf {
  /** Snake-case path from the struct root, e.g. ['header', 'seq'] or ['command', 'key_2']. */
  path: string[];
  /** Scalar kind: long, ulong, uint, ushort, ubyte, bool. */
  kind: string;
  /** Enum name, when the field's type is an enum. */
  enumName?: string;
}

/** Every scalar field of a struct, nested structs expanded in place (schema order = flatc's createX order). */
function leaves(struct: string, prefix: string[] = []): Leaf[] {
  const fields = structs.get(struct);
  if (!fields) throw new Error(`no struct ${struct}`);
  const out: Leaf[] = [];
  for (const f of fields) {
    const path = [...prefix, f.name];
    if (structs.has(f.type)) out.push(...leaves(f.type, path));
    else if (enums.has(f.type)) out.push({ path, kind: enums.get(f.type)!.base, enumName: f.type });
    else out.push({ path, kind: f.type });
  }
  return out;
}

const camel = (s: string): string => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

// ---------------------------------------------------------------------------------------------
// Codec bindings: how the codec writes/reads each struct and where each schema leaf lives in the
// codec's object form.

type Obj = Record<string, any>;
interface Binding {
  size: number;
  make: () => Obj;
  write: (dv: DataView, off: number, o: Obj) => void;
  read: (dv: DataView, off: number, o: Obj) => void;
  /** The header type an outbound record's writer forces. */
  fixedType?: RecordType;
}

const newHeader = (): Obj => ({ seq: 0, timeUs: 0, requestId: 0, frontId: 0, type: 0, flags: 0 });

const bindings: Record<string, Binding> = {
  RecordHeader: { size: codec.HEADER_BYTES, make: newHeader, write: codec.writeHeader as any, read: codec.readHeader as any },
  // The slot by position (its payload overlays are held to these bytes in test/bus/codec.test.ts).
  CommandSlot: { size: codec.COMMAND_BYTES, make: newCommandSlot as any, write: codec.writeCommandSlot as any, read: codec.readCommandSlot as any },
  // The journal value: the codec's Stamped record at offset 0, the u32 output digest at
  // JOURNAL_DIGEST_OFFSET and the u32 checksum at JOURNAL_CHECKSUM_OFFSET (the journal writer owns both).
  JournalRecord: {
    size: codec.JOURNAL_RECORD_BYTES,
    fixedType: RecordType.Stamped,
    make: () => ({ stamped: newStampedSlot(), outputDigest: 0, checksum: 0 }),
    write: (dv, off, o) => {
      writeStampedSlot(dv, off, o.stamped);
      dv.setUint32(off + codec.JOURNAL_DIGEST_OFFSET, o.outputDigest, true);
      dv.setUint32(off + codec.JOURNAL_CHECKSUM_OFFSET, o.checksum, true);
    },
    read: (dv, off, o) => {
      readStampedSlot(dv, off, o.stamped);
      o.outputDigest = dv.getUint32(off + codec.JOURNAL_DIGEST_OFFSET, true);
      o.checksum = dv.getUint32(off + codec.JOURNAL_CHECKSUM_OFFSET, true);
    },
  },
};

// A Stamped record with its command by slot position: the header through the codec's Stamped
// writer and reader, the command through the slot's.
function newStampedSlot(): Obj {
  return { ...codec.newStampedRec(), command: newCommandSlot() };
}
function writeStampedSlot(dv: DataView, off: number, o: Obj): void {
  codec.writeStamped(dv, off, { ...(o as ReturnType<typeof codec.newStampedRec>), command: newCommand() });
  codec.writeCommandSlot(dv, off + codec.STAMPED_COMMAND_OFFSET, o.command);
}
function readStampedSlot(dv: DataView, off: number, o: Obj): void {
  const r = codec.newStampedRec();
  codec.readStamped(dv, off, r);
  Object.assign(o, { ...r, command: o.command });
  codec.readCommandSlot(dv, off + codec.STAMPED_COMMAND_OFFSET, o.command);
}

// Every record type of the kind table: XRecord is written by codec.writeX, read by codec.readX,
// made by codec.newXRec, sized by codec.X_BYTES (the generated names).
const codecFns = codec as unknown as Record<string, any>;
for (const [name, type] of Object.entries(RecordType)) {
  if (typeof type !== 'number' || type === RecordType.None) continue;
  const upper = name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
  bindings[`${name}Record`] = {
    size: codecFns[`${upper}_BYTES`],
    make: codecFns[`new${name}Rec`],
    write: codecFns[`write${name}`],
    read: codecFns[`read${name}`],
    fixedType: type,
  };
}
bindings.StampedRecord = { ...bindings.StampedRecord, make: newStampedSlot, write: writeStampedSlot, read: readStampedSlot };

type Value = number | bigint | boolean;
interface Accessor {
  get(o: Obj): Value;
  set(o: Obj, v: Value): void;
}

/** Where a schema leaf lives in the codec's object form. */
function accessor(struct: string, path: string[]): Accessor {
  let p = path;
  let base = (o: Obj): Obj => o;
  if (struct === 'JournalRecord') {
    if (p[0] === 'checksum') return { get: (o) => o.checksum, set: (o, v) => (o.checksum = v) };
    if (p[0] === 'output_digest') return { get: (o) => o.outputDigest, set: (o, v) => (o.outputDigest = v) };
    base = (o) => o.stamped;
    p = p.slice(1);
  }
  const inHeader = p[0] === 'header'; // header fields are flattened into the record object
  if (inHeader) p = p.slice(1);
  if (p[0] === 'command') {
    const outer = base;
    base = (o) => outer(o).command;
    p = p.slice(1);
  }
  if (p.length !== 1) throw new Error(`unexpected path ${path.join('.')}`);
  const name = p[0];
  const key = /^key_(\d)$/.exec(name);
  if (key) {
    // key_N: little-endian u64 word N of the 32 key bytes.
    const at = Number(key[1]) * 8;
    return {
      get: (o) => {
        const k: Uint8Array = base(o).key;
        let v = 0n;
        for (let i = 7; i >= 0; i--) v = (v << 8n) | BigInt(k[at + i]);
        return v;
      },
      set: (o, v) => {
        const k: Uint8Array = base(o).key;
        let w = v as bigint;
        for (let i = 0; i < 8; i++, w >>= 8n) k[at + i] = Number(w & 0xffn);
      },
    };
  }
  if (struct === 'OrderRecord' && name === 'flags' && !inHeader) {
    // OrderRecord.flags is OrderRec.orderFlags; the header's flags stay OrderRec.flags.
    return { get: (o) => o.orderFlags, set: (o, v) => (o.orderFlags = v) };
  }
  const field = camel(name);
  return { get: (o) => base(o)[field], set: (o, v) => (base(o)[field] = v) };
}

// ---------------------------------------------------------------------------------------------
// Generated side

const generated = G as unknown as Record<string, any>;

function generatedRead(struct: string, bytes: Uint8Array, off: number, leaf: Leaf): Value {
  let o = new generated[struct]().__init(off, new flatbuffers.ByteBuffer(bytes));
  for (const p of leaf.path.slice(0, -1)) o = o[camel(p)]();
  return o[camel(leaf.path[leaf.path.length - 1])]();
}

/** Builds the struct with the generated createX; returns exactly its bytes. */
function generatedBuild(struct: string, ls: Leaf[], vals: Map<string, Value>): Uint8Array {
  const builder = new flatbuffers.Builder(16);
  const args = ls.map((l) => {
    const v = vals.get(l.path.join('.'))!;
    return l.kind === 'long' ? BigInt(v as number) : v;
  });
  const end: number = generated[struct][`create${struct}`](builder, ...args);
  // A Builder writes back to front: `end` (the returned offset) counts from the end of its buffer,
  // so the struct starts `end` bytes before the end. (asUint8Array() is only valid after finish().)
  const all = builder.dataBuffer().bytes();
  const start = all.length - end;
  expect(start).toBeGreaterThanOrEqual(0);
  return all.slice(start, start + generated[struct].sizeOf());
}

/** Compares a generated accessor's value with the expected value of a leaf. */
function expectSame(struct: string, leaf: Leaf, actual: Value, expected: Value): void {
  const want = leaf.kind === 'long' ? BigInt(expected as number) : expected;
  expect(actual, `${struct}.${leaf.path.join('.')}`).toBe(want);
}

// ---------------------------------------------------------------------------------------------
// Distinctive values (seeded, reproducible)

/** Seeded uint32 values from the shared generator. */
function mulberry32(seed: number): () => number {
  const random = prng(seed);
  return () => random() * 4294967296;
}

const MAX = Number.MAX_SAFE_INTEGER;
const EDGE_I64 = [
  0, 1, -1, MAX, -MAX, MAX - 1, -MAX + 1, 2 ** 52, -(2 ** 52), 2 ** 32, -(2 ** 32), 2 ** 32 - 1,
  -(2 ** 32) - 1, 2 ** 31, -(2 ** 31), 2 ** 31 - 1, 0x123456789abcd, -0x123456789abcd,
];
const EDGE_U64 = [0n, 0xffffffffffffffffn, 0x8000000000000000n, 0x0123456789abcdefn, 0xfedcba9876543210n];
const EDGE_U32 = [0, 1, 0xffffffff, 0x80000000, 0x7fffffff];
const EDGE_U16 = [0, 1, 0xffff, 0x8000];
const EDGE_U8 = [0, 1, 0xff, 0x80];
const ROUNDS = 64; // more than the largest enum (ResultCode) and every edge list

function leafValue(leaf: Leaf, index: number, round: number, next: () => number): Value {
  const pick = <T,>(edges: T[], random: () => T): T => (round < edges.length ? edges[(round + index) % edges.length] : random());
  if (leaf.enumName) {
    const values = enums.get(leaf.enumName)!.values;
    return values[(round + index) % values.length];
  }
  switch (leaf.kind) {
    case 'long':
      return pick(EDGE_I64, () => {
        const magnitude = Math.floor(((next() & 0x1fffff) * 2 ** 32 + next()) / 2 ** (next() % 54));
        return next() & 1 && magnitude !== 0 ? -magnitude : magnitude;
      });
    case 'ulong':
      return pick(EDGE_U64, () => (BigInt(next()) << 32n) | BigInt(next()));
    case 'uint':
      return pick(EDGE_U32, () => next());
    case 'ushort':
      return pick(EDGE_U16, () => next() & 0xffff);
    case 'ubyte':
      return pick(EDGE_U8, () => next() & 0xff);
    case 'bool':
      return (round + index) % 2 === 1;
    default:
      throw new Error(`unhandled scalar type ${leaf.kind} at ${leaf.path.join('.')}`);
  }
}

function makeValues(ls: Leaf[], round: number, next: () => number): Map<string, Value> {
  return new Map(ls.map((l, i) => [l.path.join('.'), leafValue(l, i, round, next)]));
}

/** Path of the header type leaf whose value an outbound writer forces. */
function typeLeafKey(struct: string): string {
  return struct === 'JournalRecord' ? 'stamped.header.type' : 'header.type';
}

function toCodec(struct: string, ls: Leaf[], vals: Map<string, Value>): Obj {
  const o = bindings[struct].make();
  for (const l of ls) accessor(struct, l.path).set(o, vals.get(l.path.join('.'))!);
  return o;
}

/** A ByteBuffer-compatible buffer that itself starts at a nonzero offset of its ArrayBuffer. */
function slab(size: number, fill: number): { bytes: Uint8Array; dv: DataView } {
  const ab = new ArrayBuffer(size + 64);
  const bytes = new Uint8Array(ab, 32, size);
  bytes.fill(fill);
  return { bytes, dv: new DataView(ab, 32, size) };
}

// ---------------------------------------------------------------------------------------------

describe('generated code', () => {
  it('is exactly what schemas/exchange.fbs generates', async () => {
    const { diff } = (await import('../../schemas/gen.mjs' as string)) as { diff: () => Promise<string[]> };
    expect(await diff()).toEqual([]);
  });
});

describe('the generation check', () => {
  it('reports a committed generated file that differs from the schema by one byte', async () => {
    const { compare } = (await import('../../schemas/gen.mjs' as string)) as {
      compare: (dir: string, fresh: Record<string, string>, label: string) => string[];
    };
    const dir = new URL('../../engine/bus/generated/', import.meta.url).pathname;
    const text = readFileSync(new URL('codec.ts', `file://${dir}`), 'utf8');
    const fresh = {
      'codec.ts': text.replace('off + 112, accountId', 'off + 113, accountId'),
      'kinds.ts': readFileSync(new URL('kinds.ts', `file://${dir}`), 'utf8'),
      'records.ts': readFileSync(new URL('records.ts', `file://${dir}`), 'utf8'),
    };
    expect(fresh['codec.ts']).not.toBe(text);
    expect(compare(dir, fresh, '')).toEqual(['differs: codec.ts']);
    delete (fresh as Record<string, string>)['kinds.ts'];
    expect(compare(dir, fresh, '')).toContain('not generated by the schema: kinds.ts');
  });
});

describe('kind table (engine/bus/generated/kinds.ts)', () => {
  const flatcEnum = (name: string): Record<string, number> =>
    Object.fromEntries(Object.entries(generated[name]).filter(([, v]) => typeof v === 'number')) as Record<string, number>;

  it('lists every command kind but None once, mutating below 64 and queries from 64', () => {
    const all = flatcEnum('CommandKind');
    expect(kinds.COMMAND_KINDS.map((c) => c.name).sort()).toEqual(Object.keys(all).filter((n) => n !== 'None').sort());
    for (const c of kinds.COMMAND_KINDS) {
      expect(c.kind, c.name).toBe(all[c.name]);
      expect(c.mutating, c.name).toBe(c.kind < 64);
      expect(kinds.MUTATING_BY_KIND[c.kind], c.name).toBe(c.mutating ? 1 : 0);
      for (const t of c.answer) expect(kinds.RECORD_BYTES_BY_TYPE[t], `${c.name} answers ${t}`).toBeGreaterThan(0);
    }
  });

  it('sizes every record type as flatc does; engine outputs in full, the rest by header', () => {
    const types = flatcEnum('RecordType');
    const scratch = kinds.newRecordScratch() as Record<string, Obj>;
    const outputs = new Set(Object.values(scratch).map((r) => r.type as number));
    for (const [name, t] of Object.entries(types)) {
      if (t === 0) continue;
      const size: number = generated[`${name}Record`].sizeOf();
      expect(kinds.RECORD_BYTES_BY_TYPE[t], name).toBe(size);
      expect(kinds.BYTES_BY_TYPE[t], name).toBe(outputs.has(t) ? size : codec.HEADER_BYTES);
    }
    // The Stamped record is the shell's, not an engine output: its header alone enters a digest.
    expect(outputs.has(RecordType.Stamped)).toBe(false);
    expect(outputs.size).toBe(Object.keys(types).length - 2);
  });

  it('names every value of every enum both ways, as flatc does', () => {
    for (const name of enums.keys()) {
      const upper = name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
      const names = (kinds as Record<string, unknown>)[`${upper}_NAMES`] as Record<number, string>;
      const values = (kinds as Record<string, unknown>)[`${upper}_VALUES`] as Record<string, number>;
      expect(values, name).toEqual(flatcEnum(name));
      for (const [n, v] of Object.entries(values)) expect(names[v], `${name}.${n}`).toBe(n);
    }
  });

  it('resetCommand restores every field newCommand sets', () => {
    const filled = newCommand() as unknown as Obj;
    Object.assign(filled, { requestId: 5, frontId: 6, kind: 7 });
    for (const payload of Object.values(filled)) {
      if (typeof payload !== 'object') continue;
      for (const [k, v] of Object.entries(payload as Obj)) {
        if (v instanceof Uint8Array) v.fill(9);
        else if (!['requestId', 'frontId', 'kind'].includes(k)) (payload as Obj)[k] = 3;
      }
    }
    resetCommand(filled as ReturnType<typeof newCommand>);
    expect(filled).toEqual(newCommand());
  });
});

describe('schema parse (sanity of this test)', () => {
  it('finds every struct, each with a generated class and a codec binding', () => {
    expect([...structs.keys()].sort()).toEqual(Object.keys(bindings).sort());
    for (const s of structs.keys()) expect(typeof generated[s]?.sizeOf, s).toBe('function');
    // The first twenty result codes, in order (later groups of codes are appended by feature).
    expect(enums.get('ResultCode')!.values.slice(0, 20)).toEqual([...Array(20).keys()]);
  });

  it('matches the generated createX signature for every struct', () => {
    for (const s of structs.keys()) {
      expect(generated[s][`create${s}`].length, s).toBe(leaves(s).length + 1);
    }
  });

  it('maps every schema field to a field of the engine/bus/types.ts object, and back', () => {
    // Property paths of the codec objects (key bytes and nested command expanded by name).
    const props = (o: Obj, prefix = ''): string[] =>
      Object.keys(o).flatMap((k) =>
        o[k] !== null && typeof o[k] === 'object' && !(o[k] instanceof Uint8Array) ? props(o[k], `${prefix}${k}.`) : [prefix + k],
      );
    for (const s of structs.keys()) {
      const fromSchema = new Set(
        leaves(s).map((l) => {
          const inHeader = l.path[0] === 'header';
          const p = l.path.filter((x) => x !== 'header').map((x) => (/^key_\d$/.test(x) ? 'key' : camel(x)));
          // OrderRecord's own flags byte is OrderRec.orderFlags (the header's is OrderRec.flags).
          if (s === 'OrderRecord' && !inHeader && p.join('.') === 'flags') return 'orderFlags';
          return p.join('.');
        }),
      );
      expect(new Set(props(bindings[s].make())), s).toEqual(fromSchema);
    }
  });
});

describe('codec constants equal the generated layout', () => {
  const bb = new flatbuffers.ByteBuffer(new Uint8Array(256));
  it('sizes', () => {
    expect(codec.COMMAND_BYTES).toBe(G.CommandSlot.sizeOf());
    expect(codec.HEADER_BYTES).toBe(G.RecordHeader.sizeOf());
    expect(codec.JOURNAL_RECORD_BYTES).toBe(G.JournalRecord.sizeOf());
    for (const [s, b] of Object.entries(bindings)) {
      expect(b.size, s).toBe(generated[s].sizeOf());
    }
    for (const s of Object.keys(bindings)) {
      if (s !== 'JournalRecord') expect(generated[s].sizeOf(), s).toBeLessThanOrEqual(codec.SLOT_BYTES);
    }
    expect(codec.SLOT_BYTES).toBe(256);
  });
  it('offsets', () => {
    const stamped = new G.StampedRecord().__init(0, bb);
    expect(codec.STAMPED_COMMAND_OFFSET).toBe(stamped.command()!.bb_pos);
    expect(new G.JournalRecord().__init(0, bb).stamped()!.bb_pos).toBe(0);
    // The output digest directly follows the stamped record, the checksum the digest (their read
    // offsets are checked byte-wise below).
    expect(codec.JOURNAL_DIGEST_OFFSET).toBe(G.StampedRecord.sizeOf());
    expect(codec.JOURNAL_CHECKSUM_OFFSET).toBe(codec.JOURNAL_DIGEST_OFFSET + 4);
    expect(codec.JOURNAL_CHECKSUM_OFFSET + 4).toBeLessThanOrEqual(codec.JOURNAL_RECORD_BYTES);
    const bytes = new Uint8Array(256);
    new DataView(bytes.buffer).setUint32(codec.JOURNAL_CHECKSUM_OFFSET, 0xdeadbeef, true);
    new DataView(bytes.buffer).setUint32(codec.JOURNAL_DIGEST_OFFSET, 0x0badf00d, true);
    expect(new G.JournalRecord().__init(0, new flatbuffers.ByteBuffer(bytes)).checksum()).toBe(0xdeadbeef);
    expect(new G.JournalRecord().__init(0, new flatbuffers.ByteBuffer(bytes)).outputDigest()).toBe(0x0badf00d);
  });
  it('header field offsets used by recordType/recordSeq', () => {
    for (let round = 0; round < 8; round++) {
      const { bytes, dv } = slab(64, 0x5a);
      const off = 8 + round;
      const h = { seq: EDGE_I64[round * 2], timeUs: 7, requestId: 9, frontId: 11, type: round, flags: 255 };
      codec.writeHeader(dv, off, h);
      const gh = new G.RecordHeader().__init(off, new flatbuffers.ByteBuffer(bytes));
      expect(codec.recordType(dv, off)).toBe(gh.type());
      expect(codec.recordType(dv, off)).toBe(round);
      expect(codec.recordSeq(dv, off)).toBe(h.seq);
      expect(BigInt(codec.recordSeq(dv, off))).toBe(gh.seq());
    }
  });
});

describe.each([...structs.keys()])('%s: codec and generated code read the same bytes', (struct) => {
  const ls = leaves(struct);
  const b = bindings[struct];
  const size: number = generated[struct].sizeOf();

  it('covers every enum value of every enum field', () => {
    for (const l of ls) {
      if (!l.enumName) continue;
      const seen = new Set<Value>();
      for (let round = 0; round < ROUNDS; round++) seen.add(makeValues(ls, round, mulberry32(round)).get(l.path.join('.'))!);
      expect(seen.size, l.path.join('.')).toBe(enums.get(l.enumName)!.values.length);
    }
  });

  it('codec write -> generated read, and the bytes equal the generated Builder bytes', () => {
    for (let round = 0; round < ROUNDS; round++) {
      const next = mulberry32(0x5eed0000 + round);
      const input = makeValues(ls, round, next);
      const expected = new Map(input);
      if (b.fixedType !== undefined) {
        // The writer must force the record's own type, so feed it a wrong one.
        input.set(typeLeafKey(struct), (b.fixedType + 1 + (round % 8)) % 9);
        expected.set(typeLeafKey(struct), b.fixedType);
      }
      const { bytes, dv } = slab(size + 32, 0xa5);
      const off = 8 + (round % 9); // nonzero, aligned and unaligned
      b.write(dv, off, toCodec(struct, ls, input));

      for (const l of ls) expectSame(struct, l, generatedRead(struct, bytes, off, l), expected.get(l.path.join('.'))!);
      // Nothing outside the struct was touched.
      for (let i = 0; i < bytes.length; i++) {
        if (i < off || i >= off + size) expect(bytes[i], `byte ${i}`).toBe(0xa5);
      }
      // Same bytes as FlatBuffers' own writer (including zeroed padding).
      expect(Array.from(bytes.subarray(off, off + size))).toEqual(Array.from(generatedBuild(struct, ls, expected)));
    }
  });

  it('generated write -> codec read (and codec re-write reproduces the bytes)', () => {
    for (let round = 0; round < ROUNDS; round++) {
      const next = mulberry32(0xbead0000 + round);
      const vals = makeValues(ls, round, next);
      const built = generatedBuild(struct, ls, vals);
      expect(built.length).toBe(size);

      const { bytes, dv } = slab(size + 32, 0x3c);
      const off = 16 - (round % 9);
      bytes.set(built, off);

      // Start from an object full of other values, so every field must be assigned by the read.
      const o = toCodec(struct, ls, makeValues(ls, round + 1, mulberry32(round)));
      b.read(dv, off, o);
      for (const l of ls) {
        const want = vals.get(l.path.join('.'))!;
        expect(accessor(struct, l.path).get(o), `${struct}.${l.path.join('.')}`).toBe(want);
      }

      const again = slab(size, 0xee);
      b.write(again.dv, 0, o);
      const want = built.slice();
      if (b.fixedType !== undefined) want[22] = b.fixedType; // recordHeader.type, at the record's start
      expect(Array.from(again.bytes)).toEqual(Array.from(want));
    }
  });
});
