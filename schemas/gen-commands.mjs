// Generates the command side of the kind table from schemas/exchange.fbs: the CommandHeader and
// one payload per CommandKind, each a (command) struct laid over the CommandSlot (see the schema's
// "Commands" section), and what follows from them:
//
// - engine/bus/generated/records.ts (through gen-bus.mjs): CommandHeader, XPayload and XCommand
//   interfaces, Command (the header and one reusable object per kind), newCommand, resetCommand
//   and the typed constructors fillX(cmd, payload);
// - engine/bus/generated/codec.ts: writeXPayload/readXPayload with every field at its literal slot
//   offset, and writeCommand/readCommand, which switch once on the kind;
// - engine/core/generated/dispatch.ts: the engine's dispatch from kind to rule (the rule: attribute
//   names the module, the kind's name the function), one monomorphic call per case;
// - src/front/engine-calls/generated/calls.ts: one typed engine call per kind a route submits.
import { SCALARS, camel, jsdoc, lowerFirst, readScalar, upperSnake, writeScalar } from './gen-bus.mjs';

const HEADER_FIELDS = ['request_id', 'front_id', 'kind'];

// ---------------------------------------------------------------------------------------------
// The model

/** The fields of one (command) struct at their places in the slot. */
function placeStruct(schema, layouts, slot, name) {
  const layout = layouts.get(name);
  const slotFields = new Map(slot.fields.map((f) => [f.name, f]));
  const withSlot = layout.fields.filter((f) => f.attrs?.slot).length;
  if (withSlot !== 0 && withSlot !== layout.fields.length) throw new Error(`gen: ${name}: every field or none has a slot`);
  const baseOf = (type) => schema.enums.get(type)?.base ?? type;
  return layout.fields.map((f) => {
    if (schema.structs.has(f.type)) throw new Error(`gen: ${name}.${f.name}: a command field is a scalar`);
    if (!withSlot) return { ...f, base: baseOf(f.type), slotField: null };
    const on = slotFields.get(f.attrs.slot);
    if (!on) throw new Error(`gen: ${name}.${f.name}: no slot field ${f.attrs.slot}`);
    if (f.size > on.size) throw new Error(`gen: ${name}.${f.name} is wider than its slot field ${on.name}`);
    return { ...f, offset: on.offset, size: on.size, base: baseOf(on.type), slotField: on.name, slotType: on.type };
  });
}

/** Object members of placed fields: scalars, and each run X_0..X_3 of ulongs as 32 bytes `X`. */
function commandMembers(schema, name, placed) {
  const out = [];
  for (let i = 0; i < placed.length; i++) {
    const f = placed[i];
    const run = /^(\w+)_0$/.exec(f.name);
    if (run && f.base === 'ulong') {
      for (let k = 0; k < 4; k++) {
        const g = placed[i + k];
        if (g?.name !== `${run[1]}_${k}` || g.base !== 'ulong' || g.offset !== f.offset + 8 * k) throw new Error(`gen: ${name}: ${run[1]}_0..3 must be four adjacent ulongs`);
      }
      out.push({ kind: 'key', prop: camel(run[1]), field: run[1], offset: f.offset, size: 32, slotField: f.slotField && 'key', doc: f.doc });
      i += 3;
      continue;
    }
    if (f.base === 'ulong') throw new Error(`gen: ${name}.${f.name}: ulong only as a run X_0..X_3`);
    const tsType = schema.enums.has(f.type) ? f.type : f.base === 'bool' ? 'boolean' : 'number';
    // A member of one enum on a slot field of another (BorrowLendSide on side) crosses as a number.
    const crossEnum = Boolean(f.slotType) && schema.enums.has(f.type) && schema.enums.has(f.slotType) && f.type !== f.slotType;
    out.push({ kind: 'scalar', prop: camel(f.name), base: f.base, tsType, offset: f.offset, size: f.size, field: f.name, slotField: f.slotField, crossEnum, doc: f.doc });
  }
  return out;
}

function checkDisjoint(name, members, slotSize) {
  const used = new Uint8Array(slotSize);
  for (const m of members) {
    if (m.offset + m.size > slotSize) throw new Error(`gen: ${name}.${m.field} runs past the command slot`);
    for (let b = m.offset; b < m.offset + m.size; b++) {
      if (used[b]) throw new Error(`gen: ${name}.${m.field} overlaps another field or the command header`);
      used[b] = 1;
    }
  }
}

/** Byte ranges of the slot that none of `members` covers. */
function uncovered(members, slotSize) {
  const used = new Uint8Array(slotSize);
  for (const m of members) used.fill(1, m.offset, m.offset + m.size);
  const out = [];
  for (let b = 0; b < slotSize;) {
    if (used[b]) { b++; continue; }
    const from = b;
    while (b < slotSize && !used[b]) b++;
    out.push([from, b]);
  }
  return out;
}

export function commandModel(schema, layouts) {
  const slot = layouts.get('CommandSlot');
  const structs = [...schema.structs.values()].filter((s) => s.attrs.command);
  const header = { name: 'CommandHeader', members: commandMembers(schema, 'CommandHeader', placeStruct(schema, layouts, slot, 'CommandHeader')) };
  if (header.members.map((m) => m.field).join() !== HEADER_FIELDS.join()) throw new Error(`gen: CommandHeader must be ${HEADER_FIELDS.join(', ')}`);
  const payloads = new Map();
  const kinds = schema.enums.get('CommandKind').values.filter((v) => v.value !== 0).map((v) => {
    const named = typeof v.attrs.payload === 'string' ? v.attrs.payload : `${v.name}Payload`;
    if (typeof v.attrs.payload === 'string' && !schema.structs.get(named)?.attrs.command) throw new Error(`gen: CommandKind.${v.name}: no (command) struct ${named}`);
    const struct = schema.structs.get(named)?.attrs.command ? named : null;
    if (struct && !payloads.has(struct)) {
      const members = commandMembers(schema, struct, placeStruct(schema, layouts, slot, struct));
      checkDisjoint(struct, [...header.members, ...members], slot.size);
      const all = [...header.members, ...members];
      payloads.set(struct, { name: struct, doc: schema.structs.get(struct).doc, members, zeros: uncovered(all, slot.size) });
    }
    if (typeof v.attrs.rule !== 'string') throw new Error(`gen: CommandKind.${v.name} needs rule: "<engine/core module>"`);
    return {
      name: v.name, value: v.value, prop: lowerFirst(v.name), mutating: Boolean(v.attrs.mutating), rule: v.attrs.rule,
      payload: struct ? payloads.get(struct) : null, refused: Boolean(v.attrs.refused_in_maintenance),
      answer: (v.attrs.answer ?? '').split(',').filter(Boolean), wire: v.attrs.wire ?? '',
    };
  });
  for (const s of structs) {
    if (s.name !== 'CommandHeader' && !payloads.has(s.name)) throw new Error(`gen: (command) struct ${s.name} is no kind's payload`);
  }
  return { slot, header, payloads: [...payloads.values()], kinds, bodyZeros: uncovered(header.members, slot.size) };
}

// ---------------------------------------------------------------------------------------------
// records.ts

function memberType(m) {
  return m.kind === 'key' ? 'Uint8Array' : m.tsType;
}

function zeroOfMember(m) {
  if (m.kind === 'key') return 'new Uint8Array(KEY_BYTES)';
  return m.tsType === 'boolean' ? 'false' : '0';
}

export function genCommandRecords(cm) {
  let out = '/** The common head of every command (CommandHeader): who asked, and which kind it is. */\n';
  out += `export interface CommandHeader {\n${cm.header.members.map((m) => `  ${m.prop}: ${memberType(m)};\n`).join('')}}\n\n`;
  for (const p of cm.payloads) {
    const body = p.members.map((m) => jsdoc(m.kind === 'key' ? [...m.doc, `32 bytes: ${m.field}_0..${m.field}_3 of the schema, in order.`] : m.doc, '  ') + `  ${m.prop}: ${memberType(m)};\n`).join('');
    out += `${jsdoc(p.doc, '')}export interface ${p.name} {\n${body}}\n\n`;
  }
  for (const k of cm.kinds.filter((x) => x.payload)) {
    out += `/** A ${k.name} command as its rule reads it: the header and the ${k.payload.name}. */\nexport interface ${k.name}Command extends CommandHeader, ${k.payload.name} {}\n\n`;
  }
  out += `/**
 * A command in memory: its header, and one reusable object per kind with a payload, of which the
 * one of \`kind\` holds this command. The engine's dispatch copies the header into that object
 * before it calls the kind's rule.
 */
export interface Command extends CommandHeader {
${cm.kinds.filter((k) => k.payload).map((k) => `  ${k.prop}: ${k.name}Command;\n`).join('')}}

`;
  const headerZeros = cm.header.members.map((m) => `${m.prop}: 0`).join(', ');
  out += `export function newCommand(): Command {\n  return {\n    ${headerZeros},\n`;
  for (const k of cm.kinds.filter((x) => x.payload)) {
    const props = [`requestId: 0`, `frontId: 0`, `kind: ${k.value} /* CommandKind.${k.name} */`, ...k.payload.members.map((m) => `${m.prop}: ${zeroOfMember(m)}`)];
    out += `    ${k.prop}: { ${props.join(', ')} },\n`;
  }
  out += '  };\n}\n\n';
  for (const p of cm.payloads) {
    out += `function reset${p.name}(p: ${p.name}): void {\n${p.members.map((m) => (m.kind === 'key' ? `  p.${m.prop}.fill(0);\n` : `  p.${m.prop} = ${zeroOfMember(m)};\n`)).join('')}}\n\n`;
  }
  out += '/** Sets the header and every payload back to newCommand()\'s values, in place (key bytes to zero). */\n';
  out += `export function resetCommand(cmd: Command): void {\n${cm.header.members.map((m) => `  cmd.${m.prop} = 0;\n`).join('')}`;
  out += cm.kinds.filter((k) => k.payload).map((k) => `  reset${k.payload.name}(cmd.${k.prop});\n`).join('') + '}\n';
  for (const k of cm.kinds) {
    const sets = k.payload ? k.payload.members.map((m) => (m.kind === 'key' ? `  c.${m.prop}.set(p.${m.prop});\n` : `  c.${m.prop} = p.${m.prop};\n`)).join('') : '';
    const params = k.payload ? `cmd: Command, p: ${k.payload.name}` : 'cmd: Command';
    out += `\n/** Makes \`cmd\` a ${k.name} command${k.payload ? ' carrying `p`' : ''} (the sender sets requestId and frontId). */\n`;
    out += `export function fill${k.name}(${params}): void {\n  cmd.kind = ${k.value} /* CommandKind.${k.name} */;\n`;
    out += k.payload ? `  const c = cmd.${k.prop};\n${sets}` : '';
    out += '}\n';
  }
  return out + genSlotMapping(cm);
}

/** The CommandSlot property a member lies on (`key` for a 32-byte run). */
function slotProp(m) {
  return m.kind === 'key' ? 'key' : camel(m.slotField);
}

/** commandFromSlot and slotFromCommand: the payload fields to and from their slot positions, by property. */
function genSlotMapping(cm) {
  // Payloads with slot attributes only: a payload in its own layout has no slot names.
  const kinds = cm.kinds.filter((k) => k.payload && k.payload.members.every((m) => m.kind === 'key' || m.slotField));
  const from = kinds.map((k) => `    case ${k.value} /* CommandKind.${k.name} */: { const p = c.${k.prop}; ${k.payload.members.map((m) => `p.${m.prop} = slot.${slotProp(m)}${m.crossEnum ? ' as number' : ''};`).join(' ')} break; }\n`).join('');
  const to = kinds.map((k) => `    case ${k.value} /* CommandKind.${k.name} */: { const p = c.${k.prop}; ${k.payload.members.map((m) => `slot.${slotProp(m)} = p.${m.prop}${m.crossEnum ? ' as number' : ''};`).join(' ')} break; }\n`).join('');
  return `
/**
 * The command a CommandSlot spells by position (its kind's payload fields copied from the slot
 * fields they lie on, values as they are, unchecked): for test tools and reference models that
 * build commands field by field (key bytes shared, not copied). Fills \`c\` (a new Command by default) and returns it.
 */
export function commandFromSlot(slot: CommandSlot, c: Command = newCommand()): Command {
  c.requestId = slot.requestId;
  c.frontId = slot.frontId;
  c.kind = slot.kind;
  switch (c.kind) {
${from}  }
  return c;
}

/** The CommandSlot a command fills (its header and its kind's payload; every other field zero). */
export function slotFromCommand(c: Command, slot: CommandSlot = newCommandSlot()): CommandSlot {
  slot.requestId = c.requestId;
  slot.frontId = c.frontId;
  slot.kind = c.kind;
  switch (c.kind) {
${to}  }
  return slot;
}
`;
}

// ---------------------------------------------------------------------------------------------
// codec.ts

/** Stores that zero the byte ranges, widest aligned stores first. */
function zeroRanges(ranges) {
  const out = [];
  for (const [from, to] of ranges) {
    let at = from;
    const wordsTo = from % 4 === 0 ? to - ((to - from) % 4) : from;
    if (wordsTo - from >= 16) {
      out.push(`  for (let at = ${from}; at < ${wordsTo}; at += 4) dv.setUint32(off + at, 0, true);`);
      at = wordsTo;
    }
    for (; at < to;) {
      const left = to - at;
      if (left >= 4 && at % 4 === 0) { out.push(`  dv.setUint32(off + ${at}, 0, true);`); at += 4; }
      else if (left >= 2 && at % 2 === 0) { out.push(`  dv.setUint16(off + ${at}, 0, true);`); at += 2; }
      else { out.push(`  dv.setUint8(off + ${at}, 0);`); at += 1; }
    }
  }
  return out.length ? [`  // every other byte but the header's (${ranges.map(([a, b]) => `${a}..${b - 1}`).join(', ')})`, ...out] : [];
}

function genPayloadCodec(p) {
  const longs = p.members.filter((m) => m.kind === 'scalar' && m.base === 'long');
  const fieldsConst = `${upperSnake(p.name)}_I64_FIELDS`;
  let out = '';
  const lines = [];
  if (longs.length) {
    out += `const ${fieldsConst} = [${longs.map((m) => `'${m.prop}'`).join(', ')}] as const;\n\n`;
    lines.push(`  if (!(${longs.map((m) => `Number.isSafeInteger(p.${m.prop})`).join(' && ')})) badField(p, ${fieldsConst});`);
  }
  for (const m of p.members) lines.push(m.kind === 'key' ? `  setKey(dv, off + ${m.offset}, p.${m.prop});` : writeScalar(m, 'p'));
  lines.push(...zeroRanges(p.zeros));
  out += `/** Writes ${p.name} at its slot places and zeros the rest of the slot but the header. */\n`;
  out += `export function write${p.name}(dv: DataView, off: number, p: ${p.name}): void {\n${lines.join('\n')}\n}\n\n`;
  const reads = p.members.map((m) => (m.kind === 'key' ? `  getKey(dv, off + ${m.offset}, p.${m.prop});` : readScalar(m, 'p')));
  out += `export function read${p.name}(dv: DataView, off: number, p: ${p.name}): void {\n${reads.join('\n')}\n}\n\n`;
  return out;
}

export function genCommandCodec(cm) {
  let out = '';
  for (const p of cm.payloads) out += genPayloadCodec(p);
  const withPayload = cm.kinds.filter((k) => k.payload);
  out += `/** Zeros every byte of a slot but the header's (a command without a payload). */
function zeroCommandBody(dv: DataView, off: number): void {
${zeroRanges(cm.bodyZeros).join('\n')}
}

/** Writes the command's header and its kind's payload; every other byte of the slot is zero. */
export function writeCommand(dv: DataView, off: number, c: Command): void {
  switch (c.kind) {
${withPayload.map((k) => `    case ${k.value} /* CommandKind.${k.name} */: write${k.payload.name}(dv, off, c.${k.prop}); break;\n`).join('')}    default: zeroCommandBody(dv, off);
  }
${cm.header.members.map((m) => writeScalar(m, 'c')).join('\n')}
}

/** Reads the header, then the payload of its kind (key bytes are copied, never aliased). */
export function readCommand(dv: DataView, off: number, c: Command): void {
${cm.header.members.map((m) => readScalar(m, 'c')).join('\n')}
  switch (c.kind) {
${withPayload.map((k) => `    case ${k.value} /* CommandKind.${k.name} */: return read${k.payload.name}(dv, off, c.${k.prop});\n`).join('')}  }
}
`;
  return out;
}

export function commandCodecTypes(cm) {
  return cm.payloads.map((p) => p.name);
}

// ---------------------------------------------------------------------------------------------
// engine/core/generated/dispatch.ts

const GEN_HEADER = '// Generated by schemas/gen.mjs from schemas/exchange.fbs: do not edit (npm run gen rewrites it;\n'
  + '// test/structure/schema.test.ts fails when it differs from what the schema generates).\n';

function dispatchCase(k) {
  if (!k.payload) return `    case ${k.value} /* CommandKind.${k.name} */: return ${k.prop}(s, cmd);\n`;
  return `    case ${k.value} /* CommandKind.${k.name} */: { const c = cmd.${k.prop}; c.requestId = cmd.requestId; c.frontId = cmd.frontId; return ${k.prop}(s, c); }\n`;
}

export function genDispatch(cm) {
  const modules = new Map();
  for (const k of cm.kinds) {
    if (!modules.has(k.rule)) modules.set(k.rule, []);
    modules.get(k.rule).push(k.prop);
  }
  const imports = [...modules.entries()].sort(([a], [b]) => a.localeCompare(b))
    .map(([mod, fns]) => `import { ${fns.sort().join(', ')} } from '../${mod}.js';\n`).join('');
  const fn = (name, doc, kinds) => `${doc}
export function ${name}(s: EngineState, cmd: Command): void {
  switch (cmd.kind) {
${kinds.map(dispatchCase).join('')}    default:
      return s.out.result(ResultCode.InvalidCommand, 0, cmd.frontId, cmd.requestId);
  }
}
`;
  return `${GEN_HEADER}//
// The engine's dispatch: each command kind of the schema to its rule, the function named after the
// kind in the module its rule: attribute names. Each case calls one rule with one object shape, so
// every call stays monomorphic; a kind whose rule is missing, or takes another payload, does not
// compile. A number the schema does not have is refused with InvalidCommand and changes nothing.

import { ResultCode, type Command } from '../../bus/types.js';
import type { EngineState } from '../state.js';
${imports}
${fn('applyMutating', '/** Applies a state-changing command (kind below 64) through its rule. */', cm.kinds.filter((k) => k.mutating))}
${fn('applyQuery', '/** Answers a query (kind 64 and up) through its rule. */', cm.kinds.filter((k) => !k.mutating))}`;
}

// ---------------------------------------------------------------------------------------------
// src/front/engine-calls/generated/calls.ts

/** How a route's call is answered, from the kind's answer attribute (see the schema). */
function answerShape(k) {
  const [first] = k.answer;
  const last = k.answer[k.answer.length - 1];
  if (first === 'Order') return last === 'Result' ? 'orderList' : 'order';
  if (first === 'FeeRates') return 'feeRates';
  if (first === 'Balance' && !k.mutating) return 'balances';
  if (first === 'Collateral') return 'collateral';
  if (first === 'IndexPrice' && !k.mutating) return 'indexPrices';
  if (first === 'AccountSettings') return 'accountSettings';
  if (first === 'LendPool') return 'lendPools';
  if (first === 'MarkPrice') return 'markPrices';
  if (first === 'BorrowLend' && !k.mutating) return 'borrowLendPositions';
  if (first === 'LiquidationPrice') return 'liquidationPrice';
  if (first === 'Position') return 'positions';
  if (first === 'Insurance') return 'insurance';
  if (first === 'BackstopProvider') return 'backstop';
  if (first === 'OpenInterest') return 'openInterest';
  if (last === 'Result') return 'result';
  return null;
}

const SHAPES = {
  result: { value: 'Accepted', answer: 'resultAnswer(reply)', extra: '' },
  order: { value: 'OrderView', answer: 'orderAnswer(reply)', extra: '' },
  orderList: { value: 'number', answer: 'orderListAnswer(reply, onOrder)', extra: ', onOrder: (order: OrderView) => void' },
  balances: { value: 'Balances', answer: 'balancesAnswer(reply, this.assetCount())', extra: '' },
  feeRates: { value: 'FeeRates', answer: 'feeRatesAnswer(reply)', extra: '' },
  collateral: { value: 'Collateral', answer: 'collateralAnswer(reply)', extra: '' },
  indexPrices: { value: 'IndexPrices', answer: 'indexPricesAnswer(reply)', extra: '' },
  accountSettings: { value: 'AccountSettingsView', answer: 'accountSettingsAnswer(reply)', extra: '' },
  lendPools: { value: 'LendPoolView[]', answer: 'lendPoolsAnswer(reply)', extra: '' },
  borrowLendPositions: { value: 'BorrowLendView[]', answer: 'borrowLendPositionsAnswer(reply)', extra: '' },
  liquidationPrice: { value: 'LiquidationPriceView', answer: 'liquidationPriceAnswer(reply)', extra: '' },
  positions: { value: 'PositionView[]', answer: 'positionsAnswer(reply)', extra: '' },
  markPrices: { value: 'MarkPriceView[]', answer: 'markPricesAnswer(reply)', extra: '' },
  insurance: { value: 'InsuranceLines', answer: 'insuranceAnswer(reply)', extra: '' },
  backstop: { value: 'BackstopProviders', answer: 'backstopAnswer(reply)', extra: '' },
  openInterest: { value: 'OpenInterestLines', answer: 'openInterestAnswer(reply)', extra: '' },
};

export function genCalls(cm) {
  const calls = cm.kinds.filter((k) => k.wire.includes('/') && answerShape(k));
  const used = [...new Set(calls.map((k) => answerShape(k)))];
  const answers = [...new Set(used.map((s) => SHAPES[s].answer.replace(/\(.*$/, '')))].sort();
  const values = [...new Set(['Reply', ...used.map((s) => SHAPES[s].value.replace(/\[\]$/, '')).filter((v) => v !== 'number'), 'OrderView'])].sort();
  const payloadTypes = [...new Set(calls.filter((k) => k.payload).map((k) => k.payload.name))].sort();
  let out = `${GEN_HEADER}//
// One typed engine call per command kind a route submits (its wire names a route): the method named
// after the kind fills the kind's payload and collects the answer its answer attribute names. The
// hand-written EngineCalls (../index.ts) extends this class with the submission itself.

import { ${['CommandKind', ...calls.map((k) => `fill${k.name}`).sort(), 'type Command', ...payloadTypes.map((t) => `type ${t}`)].join(', ')} } from '../../../../engine/bus/types.js';
import type { PendingRequest } from '../../engine-link.js';
import { ${[...answers, ...values.map((v) => `type ${v}`)].join(', ')} } from '../answers.js';

export abstract class KindCalls {
  /** Submits a command of \`kind\` (refused at once where maintenance refuses it); false when not submitted. */
  protected abstract submit<T>(reply: Reply<T>, kind: CommandKind, fill: (cmd: Command) => void, answer: PendingRequest): boolean;
  /** Balances answers hold one entry per configured asset. */
  protected abstract assetCount(): number;
`;
  for (const k of calls) {
    const shape = SHAPES[answerShape(k)];
    const params = `reply: Reply<${shape.value}>${k.payload ? `, p: ${k.payload.name}` : ''}${shape.extra}`;
    const fill = k.payload ? `(cmd) => fill${k.name}(cmd, p)` : `fill${k.name}`;
    out += `
  /** ${k.name} (${k.wire}); answered by ${k.answer.join(', ')}. */
  ${k.prop}(${params}): boolean {
    return this.submit(reply, CommandKind.${k.name}, ${fill}, ${shape.answer});
  }
`;
  }
  return out + '}\n';
}
