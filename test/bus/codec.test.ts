// engine/bus/codec.ts on its own: every record type round-trips through write/read, 64-bit integers
// keep their exact value and two's-complement bytes, non-safe integers are refused, raw copies
// and crc32 behave. (test/structure/schema.test.ts checks the byte layout against the generated code.)
import { crc32 as zlibCrc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import * as codec from '../../engine/bus/codec.js';
import * as types from '../../engine/bus/types.js';
import {
  BorrowLendSide,
  CommandKind,
  ExpiryReason,
  SystemOrderType,
  HeaderFlag,
  OrderEvent,
  IndexPriceSource,
  OrderFlag,
  OrderStatus,
  OrderType,
  RecordType,
  ResultCode,
  SelfTradePrevention,
  Side,
  SlippageToleranceType,
  TimeInForce,
  TriggerBy,
  newCommand,
  newCommandSlot,
  OrderBookState,
  SystemState,
  type Command,
  type CommandSlot,
  type RecordHeaderFields,
} from '../../engine/bus/types.js';

const MAX = Number.MAX_SAFE_INTEGER;

function slot(bytes = codec.SLOT_BYTES * 2): { bytes: Uint8Array; dv: DataView } {
  const ab = new ArrayBuffer(bytes + 16);
  return { bytes: new Uint8Array(ab, 8, bytes), dv: new DataView(ab, 8, bytes) };
}

function key(seed: number): Uint8Array {
  const k = new Uint8Array(32);
  for (let i = 0; i < 32; i++) k[i] = (seed * 31 + i * 97 + 0x80) & 0xff;
  return k;
}

/** An order with every field of the slot set, by slot position. */
function sampleSlot(): CommandSlot {
  return {
    priceTicks: MAX,
    qtyLots: -MAX,
    quoteQtyUnits: 2 ** 32,
    amountUnits: -(2 ** 32) - 1,
    orderId: 0x1234_5678_9abc,
    triggerPriceTicks: -1,
    triggerQtyLots: 1,
    takeProfitTriggerTicks: 2 ** 31,
    takeProfitLimitTicks: -(2 ** 31),
    stopLossTriggerTicks: 4_503_599_627_370_497,
    stopLossLimitTicks: -4_503_599_627_370_497,
    slippageTolerance: 250,
    key: key(7),
    requestId: 0xffff_fffe,
    accountId: 0x8000_0001,
    clientId: 0xffff_ffff,
    frontId: 0xfffe,
    marketId: 0x8001,
    assetId: 0xffff,
    kind: CommandKind.PlaceOrder,
    side: Side.Ask,
    orderType: OrderType.Market,
    timeInForce: TimeInForce.FOK,
    selfTradePrevention: SelfTradePrevention.RejectBoth,
    flags: 0x7f,
    triggerBy: TriggerBy.IndexPrice,
    takeProfitTriggerBy: TriggerBy.MarkPrice,
    stopLossTriggerBy: TriggerBy.LastPrice,
    slippageToleranceType: SlippageToleranceType.Percent,
  };
}

/** The same order as a Command: header and PlaceOrder payload (everything but the key, amount, order id and asset id). */
function sampleCommand(): Command {
  const { key: _key, amountUnits: _amount, orderId: _orderId, assetId: _asset, requestId, frontId, kind, ...order } = sampleSlot();
  const c = newCommand();
  Object.assign(c, { requestId, frontId, kind });
  Object.assign(c.placeOrder, order);
  return c;
}

const header = (type: RecordType): RecordHeaderFields => ({
  seq: MAX - 3,
  timeUs: 1_735_689_600_123_456,
  requestId: 0xdead_beef,
  frontId: 0xffff,
  type,
  flags: HeaderFlag.Last | 0x80,
});

/** One writer/reader pair with a distinctive record and the names of its 64-bit fields. */
interface Case {
  name: string;
  type: RecordType;
  bytes: number;
  make: () => any;
  write: (dv: DataView, off: number, r: any) => void;
  read: (dv: DataView, off: number, r: any) => void;
  sample: () => any;
  i64: string[];
}

const HEADER_I64 = ['seq', 'timeUs'];

const cases: Case[] = [
  {
    name: 'Stamped',
    type: RecordType.Stamped,
    bytes: codec.STAMPED_BYTES,
    make: codec.newStampedRec,
    write: codec.writeStamped,
    read: codec.readStamped,
    sample: () => ({ ...header(RecordType.Stamped), command: sampleCommand() }),
    i64: HEADER_I64,
  },
  {
    name: 'Result',
    type: RecordType.Result,
    bytes: codec.RESULT_BYTES,
    make: codec.newResultRec,
    write: codec.writeResult,
    read: codec.readResult,
    sample: () => ({ ...header(RecordType.Result), value: -987_654_321_012, code: ResultCode.WouldSelfTrade }),
    i64: [...HEADER_I64, 'value'],
  },
  {
    name: 'Order',
    type: RecordType.Order,
    bytes: codec.ORDER_BYTES,
    make: codec.newOrderRec,
    write: codec.writeOrder,
    read: codec.readOrder,
    sample: () => ({
      ...header(RecordType.Order),
      flags: HeaderFlag.Last,
      orderFlags: OrderFlag.PostOnly | OrderFlag.IsMaker,
      orderId: 0x1f_ffff_ffff_ffff,
      priceTicks: 123_456_789,
      qtyLots: 2 ** 40 + 3,
      quoteQtyUnits: -(2 ** 45),
      executedQtyLots: 17,
      executedQuoteUnits: 2 ** 32 - 1,
      lastFillQtyLots: 5,
      lastFillPriceTicks: 123_456_700,
      tradeId: MAX,
      feeUnits: -42,
      createdAtUs: 1_735_689_600_000_001,
      accountId: 0xffff_ffff,
      clientId: 0x8000_0000,
      marketId: 0xfffe,
      feeAssetId: 0x1234,
      event: OrderEvent.TriggerFailed,
      side: Side.Ask,
      orderType: OrderType.Market,
      timeInForce: TimeInForce.IOC,
      selfTradePrevention: SelfTradePrevention.RejectMaker,
      status: OrderStatus.TriggerFailed,
      expiryReason: ExpiryReason.PriceBand,
      systemOrderType: SystemOrderType.LiquidatePositionOnBook,
    }),
    i64: [
      ...HEADER_I64,
      'orderId',
      'priceTicks',
      'qtyLots',
      'quoteQtyUnits',
      'executedQtyLots',
      'executedQuoteUnits',
      'lastFillQtyLots',
      'lastFillPriceTicks',
      'tradeId',
      'feeUnits',
      'createdAtUs',
    ],
  },
  {
    name: 'Trade',
    type: RecordType.Trade,
    bytes: codec.TRADE_BYTES,
    make: codec.newTradeRec,
    write: codec.writeTrade,
    read: codec.readTrade,
    sample: () => ({
      ...header(RecordType.Trade),
      tradeId: MAX - 1,
      priceTicks: 99,
      qtyLots: 2 ** 50,
      buyerOrderId: 0xabc_def0_1234,
      sellerOrderId: 0x123_4567_89ab,
      marketId: 0xffff,
      buyerIsMaker: true,
    }),
    i64: [...HEADER_I64, 'tradeId', 'priceTicks', 'qtyLots', 'buyerOrderId', 'sellerOrderId'],
  },
  {
    name: 'Balance',
    type: RecordType.Balance,
    bytes: codec.BALANCE_BYTES,
    make: codec.newBalanceRec,
    write: codec.writeBalance,
    read: codec.readBalance,
    sample: () => ({
      ...header(RecordType.Balance),
      availableUnits: MAX,
      lockedUnits: -MAX,
      accountId: 4_000_000_000,
      assetId: 0xfff0,
    }),
    i64: [...HEADER_I64, 'availableUnits', 'lockedUnits'],
  },
  {
    name: 'Depth',
    type: RecordType.Depth,
    bytes: codec.DEPTH_BYTES,
    make: codec.newDepthRec,
    write: codec.writeDepth,
    read: codec.readDepth,
    sample: () => ({
      ...header(RecordType.Depth),
      priceTicks: 2 ** 33 + 1,
      qtyLots: 0,
      updateId: MAX - 12,
      marketId: 513,
      side: Side.Ask,
    }),
    i64: [...HEADER_I64, 'priceTicks', 'qtyLots', 'updateId'],
  },
  {
    name: 'Account',
    type: RecordType.Account,
    bytes: codec.ACCOUNT_BYTES,
    make: codec.newAccountRec,
    write: codec.writeAccount,
    read: codec.readAccount,
    sample: () => ({ ...header(RecordType.Account), key: key(3), accountId: 0xfedc_ba98 }),
    i64: HEADER_I64,
  },
  {
    name: 'Market',
    type: RecordType.Market,
    bytes: codec.MARKET_BYTES,
    make: codec.newMarketRec,
    write: codec.writeMarket,
    read: codec.readMarket,
    sample: () => ({ ...header(RecordType.Market), updateId: 2 ** 52 + 7, lastTradeId: MAX, marketId: 0xffff }),
    i64: [...HEADER_I64, 'updateId', 'lastTradeId'],
  },
  // Order book states and fee rates
  {
    name: 'MarketState',
    type: RecordType.MarketState,
    bytes: codec.MARKET_STATE_BYTES,
    make: codec.newMarketStateRec,
    write: codec.writeMarketState,
    read: codec.readMarketState,
    sample: () => ({ ...header(RecordType.MarketState), marketId: 0xfffe, state: 4 }),
    i64: HEADER_I64,
  },
  {
    name: 'FeeRates',
    type: RecordType.FeeRates,
    bytes: codec.FEE_RATES_BYTES,
    make: codec.newFeeRatesRec,
    write: codec.writeFeeRates,
    read: codec.readFeeRates,
    sample: () => ({ ...header(RecordType.FeeRates), accountId: 0xfedc_ba98, makerFeeBps: 10_000, takerFeeBps: 0xfffe }),
    i64: HEADER_I64,
  },
];

describe.each(cases)('$name record', (c) => {
  it('newXRec() is zeroed with the type preset', () => {
    const r = c.make();
    expect(r.type).toBe(c.type);
    const { dv, bytes } = slot();
    c.write(dv, 0, r);
    const expected = new Uint8Array(c.bytes);
    expected[22] = c.type;
    expect(Array.from(bytes.subarray(0, c.bytes))).toEqual(Array.from(expected));
  });

  it('round-trips through write/read, at aligned and unaligned offsets', () => {
    for (const off of [0, 8, 40, codec.SLOT_BYTES, 3, 77]) {
      const { dv } = slot();
      const r = c.sample();
      c.write(dv, off, r);
      const back = c.make();
      c.read(dv, off, back);
      expect(back).toEqual(r);
      expect(codec.recordType(dv, off)).toBe(c.type);
      expect(codec.recordSeq(dv, off)).toBe(r.seq);
    }
  });

  it('writes the same bytes through its 32-bit words as through the DataView, and nothing around them', () => {
    // A view on a 4-byte boundary at an aligned offset takes the word path (codec-primitives
    // wordsOf); a view starting at an odd byte the DataView path. Both start from the same junk.
    const records = [c.sample(), c.make()];
    for (const field of c.i64) for (const v of [-1, MAX, -MAX, 2 ** 32 + 5, -(2 ** 31) - 1]) records.push({ ...c.sample(), [field]: v });
    for (const r of records) {
      const words = new ArrayBuffer(c.bytes + 64);
      const odd = new ArrayBuffer(c.bytes + 65);
      new Uint8Array(words).fill(0xa5);
      new Uint8Array(odd).fill(0xa5);
      c.write(new DataView(words, 8, c.bytes + 16), 8, r);
      c.write(new DataView(odd, 1, c.bytes + 24), 16, r);
      expect(Array.from(new Uint8Array(words, 0, c.bytes + 64))).toEqual(Array.from(new Uint8Array(odd, 1, c.bytes + 64)));
    }
  });

  it('throws RangeError for a record past the end of the view, on either path', () => {
    for (const offset of [0, 1]) {
      const dv = new DataView(new ArrayBuffer(c.bytes + 16), offset, c.bytes + 8);
      expect(() => c.write(dv, 12, c.sample())).toThrow(RangeError);
    }
  });

  it('writes its own record type whatever r.type says; readX reports the stored type', () => {
    const { dv } = slot();
    const r = c.sample();
    r.type = c.type === RecordType.Market ? RecordType.Result : RecordType.Market;
    c.write(dv, 16, r);
    expect(codec.recordType(dv, 16)).toBe(c.type);
    const back = c.make();
    c.read(dv, 16, back);
    expect(back.type).toBe(c.type);
    dv.setUint8(16 + 22, RecordType.None);
    c.read(dv, 16, back);
    expect(back.type).toBe(RecordType.None);
  });

  it('keeps every 64-bit field exact at the safe-integer edges', () => {
    const edges = [0, 1, -1, MAX, -MAX, 2 ** 32, -(2 ** 32), 2 ** 32 - 1, 2 ** 32 + 1, -(2 ** 31) - 1, 2 ** 53 - 2];
    for (const field of c.i64) {
      for (const v of edges) {
        const { dv } = slot();
        const r = c.sample();
        r[field] = v;
        c.write(dv, 0, r);
        const back = c.make();
        c.read(dv, 0, back);
        expect(back[field], `${field}=${v}`).toBe(v);
      }
    }
  });

  it('refuses a non-safe integer in every 64-bit field', () => {
    const bad = [2 ** 53, -(2 ** 53), MAX + 2, 1.5, -0.25, NaN, Infinity, -Infinity, 1e300];
    for (const field of c.i64) {
      for (const v of bad) {
        const { dv } = slot();
        const r = c.sample();
        r[field] = v;
        expect(() => c.write(dv, 0, r), `${field}=${v}`).toThrow(RangeError);
      }
    }
  });
});

describe('64-bit encoding', () => {
  it('is little-endian two’s complement (checked against DataView BigInt64)', () => {
    const { dv } = slot();
    const r = codec.newResultRec();
    let x = 0x9e3779b9;
    for (let i = 0; i < 2000; i++) {
      x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
      const hi = x & 0x1fffff;
      x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
      const v = (i & 1 ? -1 : 1) * Math.floor((hi * 2 ** 32 + x) / 2 ** (i % 53)) || 0;
      r.value = v;
      codec.writeResult(dv, 0, r);
      expect(dv.getBigInt64(24, true)).toBe(BigInt(v));
      dv.setBigInt64(24, BigInt(-v), true);
      const back = codec.newResultRec();
      codec.readResult(dv, 0, back);
      expect(back.value).toBe(-v || 0);
    }
  });

  it('writes known byte patterns', () => {
    const { dv, bytes } = slot();
    const r = codec.newResultRec();
    const at = (v: number) => {
      r.value = v;
      codec.writeResult(dv, 0, r);
      return Array.from(bytes.subarray(24, 32));
    };
    expect(at(-1)).toEqual([255, 255, 255, 255, 255, 255, 255, 255]);
    expect(at(2 ** 32)).toEqual([0, 0, 0, 0, 1, 0, 0, 0]);
    expect(at(-(2 ** 32))).toEqual([0, 0, 0, 0, 255, 255, 255, 255]);
    expect(at(MAX)).toEqual([255, 255, 255, 255, 255, 255, 0x1f, 0]);
    expect(at(-MAX)).toEqual([1, 0, 0, 0, 0, 0, 0xe0, 255]);
    expect(at(0x0102030405)).toEqual([5, 4, 3, 2, 1, 0, 0, 0]);
  });
});

describe('commands', () => {
  it('round-trip through writeCommand/readCommand at any offset', () => {
    for (const off of [0, 24, 5]) {
      const { dv } = slot();
      const c = sampleCommand();
      codec.writeCommand(dv, off, c);
      const back = newCommand();
      codec.readCommand(dv, off, back);
      expect(back).toEqual(c);
    }
  });

  it('refuses a non-safe integer in every payload field that lies on a 64-bit slot field', () => {
    const refused: string[] = [];
    const blank = newCommand() as unknown as Record<string, unknown>;
    for (const [kindProp, payload] of Object.entries(blank)) {
      if (typeof payload !== 'object') continue;
      for (const [field, value] of Object.entries(payload as Record<string, unknown>)) {
        if (typeof value !== 'number' || field === 'requestId' || field === 'frontId' || field === 'kind') continue;
        const c = newCommand() as unknown as Record<string, Record<string, unknown>> & Command;
        c.kind = c[kindProp].kind as CommandKind;
        c[kindProp][field] = 0.5;
        try {
          codec.writeCommand(slot().dv, 0, c);
        } catch (e) {
          expect(e).toBeInstanceOf(RangeError);
          refused.push(`${kindProp}.${field}`);
        }
      }
    }
    expect(refused).toEqual([
      'deposit.amountUnits',
      ...['priceTicks', 'qtyLots', 'quoteQtyUnits', 'triggerPriceTicks', 'triggerQtyLots', 'takeProfitTriggerTicks', 'takeProfitLimitTicks',
        'stopLossTriggerTicks', 'stopLossLimitTicks', 'slippageTolerance'].map((f) => `placeOrder.${f}`),
      'cancelOrder.orderId', 'setMarketState.state', 'setFeeRates.makerFeeBps', 'setFeeRates.takerFeeBps', 'withdraw.amountUnits',
      'convertDust.amountUnits', 'confirmWithdrawal.withdrawalId', 'setSystemState.state', 'setIndexPrice.priceE9', 'setIndexPrice.source',
      'updateAccountSettings.leverageLimitHundredths', 'updateAccountSettings.settingsWord', 'borrowLend.quantityUnits', 'depositInsurance.amountUnits', 'queryOrder.orderId',
      'queryMaxOrderQty.priceTicks', 'queryLiquidationPrice.quantityUnits',
    ]);
  });

  it('stores the key as raw bytes in order and copies them on read (no aliasing)', () => {
    const { dv, bytes } = slot();
    const c = newCommand();
    c.kind = CommandKind.CreateAccount;
    c.createAccount.key = key(7);
    codec.writeCommand(dv, 0, c);
    expect(Array.from(bytes.subarray(96, 128))).toEqual(Array.from(c.createAccount.key));
    // key_0 is the little-endian u64 of bytes 0..7
    expect(dv.getBigUint64(96, true)).toBe(new DataView(c.createAccount.key.buffer).getBigUint64(0, true));

    const back = newCommand();
    const keyObject = back.createAccount.key;
    codec.readCommand(dv, 0, back);
    expect(back.createAccount.key).toBe(keyObject);
    expect(Array.from(back.createAccount.key)).toEqual(Array.from(c.createAccount.key));
    bytes.fill(0, 96, 128);
    expect(Array.from(back.createAccount.key)).toEqual(Array.from(c.createAccount.key));
  });

  it('refuses a key that is not 32 bytes', () => {
    const { dv } = slot();
    const c = newCommand();
    c.kind = CommandKind.CreateAccount;
    c.createAccount.key = new Uint8Array(31);
    expect(() => codec.writeCommand(dv, 0, c)).toThrow(RangeError);
    const r = codec.newAccountRec();
    r.key = new Uint8Array(33);
    expect(() => codec.writeAccount(dv, 0, r)).toThrow(RangeError);
    expect(() => codec.readAccount(dv, 0, r)).toThrow(RangeError);
  });

  // Journaled commands keep their bytes: each kind's payload writes exactly what the slot, filled
  // by position as the first commands were, holds.
  it('writes every kind\'s payload at the slot positions its journals hold', () => {
    const k = key(3);
    const cases: Array<[(c: Command) => void, Partial<CommandSlot>]> = [
      [(c) => types.fillCreateAccount(c, { key: k }), { kind: CommandKind.CreateAccount, key: k }],
      [(c) => types.fillDeposit(c, { accountId: 5, assetId: 2, amountUnits: 1_000_000_007 }), { kind: CommandKind.Deposit, accountId: 5, assetId: 2, amountUnits: 1_000_000_007 }],
      [(c) => types.fillCancelOrder(c, { accountId: 5, marketId: 1, orderId: 2 ** 40 + 3, clientId: 9, flags: 4 }), { kind: CommandKind.CancelOrder, accountId: 5, marketId: 1, orderId: 2 ** 40 + 3, clientId: 9, flags: 4 }],
      [(c) => Object.assign(c, sampleCommand()), { ...sampleSlot(), key: new Uint8Array(32), amountUnits: 0, orderId: 0, assetId: 0 }],
      [(c) => types.fillCancelAll(c, { accountId: 5, marketId: 1 }), { kind: CommandKind.CancelAll, accountId: 5, marketId: 1 }],
      [(c) => types.fillTick(c), { kind: CommandKind.Tick }],
      [(c) => types.fillSnapshot(c), { kind: CommandKind.Snapshot }],
      [(c) => types.fillSetMarketState(c, { marketId: 1, state: OrderBookState.PostOnly }), { kind: CommandKind.SetMarketState, marketId: 1, amountUnits: OrderBookState.PostOnly }],
      [(c) => types.fillSetFeeRates(c, { accountId: 5, makerFeeBps: 7, takerFeeBps: 10_000 }), { kind: CommandKind.SetFeeRates, accountId: 5, amountUnits: 7, quoteQtyUnits: 10_000 }],
      [(c) => types.fillWithdraw(c, { accountId: 5, assetId: 2, amountUnits: 77, intentDigest: k, flags: 0x30 }), { kind: CommandKind.Withdraw, accountId: 5, assetId: 2, amountUnits: 77, key: k, flags: 0x30 }],
      [(c) => types.fillConvertDust(c, { accountId: 5, marketId: 1, amountUnits: 3 }), { kind: CommandKind.ConvertDust, accountId: 5, marketId: 1, amountUnits: 3 }],
      [(c) => types.fillConfirmWithdrawal(c, { accountId: 5, withdrawalId: 41 }), { kind: CommandKind.ConfirmWithdrawal, accountId: 5, orderId: 41 }],
      [(c) => types.fillSetSystemState(c, { state: SystemState.Maintenance }), { kind: CommandKind.SetSystemState, amountUnits: SystemState.Maintenance }],
      [(c) => types.fillQueryBalances(c, { accountId: 5 }), { kind: CommandKind.QueryBalances, accountId: 5 }],
      [(c) => types.fillQueryOpenOrders(c, { accountId: 5, marketId: 0xffff }), { kind: CommandKind.QueryOpenOrders, accountId: 5, marketId: 0xffff }],
      [(c) => types.fillQueryOrder(c, { accountId: 5, marketId: 1, orderId: 8, clientId: 0, flags: 0 }), { kind: CommandKind.QueryOrder, accountId: 5, marketId: 1, orderId: 8 }],
      [(c) => types.fillQuerySnapshot(c), { kind: CommandKind.QuerySnapshot }],
      [(c) => types.fillQueryFeeRates(c, { accountId: 5 }), { kind: CommandKind.QueryFeeRates, accountId: 5 }],
      [(c) => types.fillConvertAllDust(c, { accountId: 5, assetId: 0, marketId: 0xffff }), { kind: CommandKind.ConvertAllDust, accountId: 5, assetId: 0, marketId: 0xffff }],
      [(c) => types.fillSetIndexPrice(c, { assetId: 2, priceE9: 2 ** 45 + 9, source: IndexPriceSource.Feed }), { kind: CommandKind.SetIndexPrice, assetId: 2, priceTicks: 2 ** 45 + 9, amountUnits: IndexPriceSource.Feed }],
      [(c) => types.fillUpdateAccountSettings(c, { accountId: 5, settingsWord: 0x020b, leverageLimitHundredths: 350 }), { kind: CommandKind.UpdateAccountSettings, accountId: 5, quoteQtyUnits: 0x020b, amountUnits: 350 }],
      [(c) => types.fillQueryMaxOrderQty(c, { accountId: 5, marketId: 1, side: Side.Ask, priceTicks: 123, flags: 0x70 }), { kind: CommandKind.QueryMaxOrderQty, accountId: 5, marketId: 1, side: Side.Ask, priceTicks: 123, flags: 0x70 }],
      [(c) => types.fillQueryCollateral(c, { accountId: 5, assetId: 0 }), { kind: CommandKind.QueryCollateral, accountId: 5, assetId: 0 }],
      [(c) => types.fillQueryPositions(c, { accountId: 5, marketId: 3 }), { kind: CommandKind.QueryPositions, accountId: 5, marketId: 3 }],
      [(c) => types.fillQueryMarkPrices(c), { kind: CommandKind.QueryMarkPrices }],
      [(c) => types.fillQueryBackstop(c), { kind: CommandKind.QueryBackstop }],
      [(c) => types.fillQueryOpenInterest(c, { marketId: 3 }), { kind: CommandKind.QueryOpenInterest, marketId: 3 }],
      [(c) => types.fillQueryIndexPrices(c), { kind: CommandKind.QueryIndexPrices }],
      [(c) => types.fillQueryAccountSettings(c, { accountId: 5 }), { kind: CommandKind.QueryAccountSettings, accountId: 5 }],
      [(c) => types.fillBorrowLend(c, { accountId: 5, assetId: 2, side: BorrowLendSide.Lend, quantityUnits: 2 ** 41 + 7 }), { kind: CommandKind.BorrowLend, accountId: 5, assetId: 2, side: BorrowLendSide.Lend as number as Side, amountUnits: 2 ** 41 + 7 }],
      [(c) => types.fillQueryLendPools(c), { kind: CommandKind.QueryLendPools }],
      [(c) => types.fillSetBackstopProvider(c, { accountId: 2 ** 31 + 7 }), { kind: CommandKind.SetBackstopProvider, accountId: 2 ** 31 + 7 }],
      [(c) => types.fillRemoveBackstopProvider(c, { accountId: 13 }), { kind: CommandKind.RemoveBackstopProvider, accountId: 13 }],
      [(c) => types.fillDepositInsurance(c, { accountId: 0, assetId: 2, amountUnits: 2 ** 41 + 5 }), { kind: CommandKind.DepositInsurance, assetId: 2, amountUnits: 2 ** 41 + 5 }],
      [(c) => types.fillQueryBorrowLendPositions(c, { accountId: 5 }), { kind: CommandKind.QueryBorrowLendPositions, accountId: 5 }],
      [(c) => types.fillQueryMaxBorrowQty(c, { accountId: 5, assetId: 2 }), { kind: CommandKind.QueryMaxBorrowQty, accountId: 5, assetId: 2 }],
      [(c) => types.fillQueryMaxWithdrawalQty(c, { accountId: 5, assetId: 2, flags: 0x30 }), { kind: CommandKind.QueryMaxWithdrawalQty, accountId: 5, assetId: 2, flags: 0x30 }],
      [(c) => types.fillQueryInsurance(c), { kind: CommandKind.QueryInsurance }],
      [(c) => types.fillQueryLiquidationPrice(c, { accountId: 5, assetId: 2, side: BorrowLendSide.Borrow, quantityUnits: 2 ** 41 + 9 }), { kind: CommandKind.QueryLiquidationPrice, accountId: 5, assetId: 2, side: BorrowLendSide.Borrow as number as Side, amountUnits: 2 ** 41 + 9 }],
    ];
    const covered = new Set<number>();
    for (const [fill, positions] of cases) {
      const ours = slot();
      const legacy = slot();
      ours.bytes.fill(0xcc);
      const c = newCommand();
      fill(c);
      c.requestId = 0xabcd;
      c.frontId = 2;
      codec.writeCommand(ours.dv, 0, c);
      codec.writeCommandSlot(legacy.dv, 0, { ...newCommandSlot(), ...positions, requestId: 0xabcd, frontId: 2 });
      expect(Array.from(ours.bytes.subarray(0, codec.COMMAND_BYTES)), CommandKind[c.kind]).toEqual(Array.from(legacy.bytes.subarray(0, codec.COMMAND_BYTES)));
      // and reads back as the same command
      const back = newCommand();
      codec.readCommand(ours.dv, 0, back);
      expect(back, CommandKind[c.kind]).toEqual(c);
      covered.add(c.kind);
    }
    expect([...covered].sort((a, b) => a - b)).toEqual(types.COMMAND_KINDS.map((k) => k.kind));
  });

  it('zeroes the padding and writes nothing past COMMAND_BYTES', () => {
    const { dv, bytes } = slot();
    bytes.fill(0xcc);
    codec.writeCommand(dv, 0, newCommand());
    expect(bytes.subarray(0, codec.COMMAND_BYTES).every((b) => b === 0)).toBe(true);
    expect(bytes[codec.COMMAND_BYTES]).toBe(0xcc);
  });
});

describe('headers', () => {
  it('writeHeader/readHeader round-trip with the type as given', () => {
    const { dv } = slot();
    for (const type of [RecordType.None, RecordType.Depth, 255]) {
      const h = { ...header(type), flags: 0xfe };
      codec.writeHeader(dv, 8, h);
      const back = { seq: 1, timeUs: 1, requestId: 1, frontId: 1, type: 1, flags: 1 };
      codec.readHeader(dv, 8, back);
      expect(back).toEqual(h);
      expect(codec.recordType(dv, 8)).toBe(type);
      expect(codec.recordSeq(dv, 8)).toBe(h.seq);
    }
  });

  it('recordSeq reads negative and large sequences exactly', () => {
    const { dv } = slot();
    for (const seq of [0, 1, MAX, -5, 2 ** 32 + 17]) {
      codec.writeHeader(dv, 0, { ...header(RecordType.Order), seq });
      expect(codec.recordSeq(dv, 0)).toBe(seq);
    }
  });

  it('OrderRec.orderFlags is byte 131 and OrderRec.flags the header byte 23, independently', () => {
    const { dv, bytes } = slot();
    const r = codec.newOrderRec();
    r.orderFlags = OrderFlag.HasClientId | OrderFlag.ReduceOnly;
    r.flags = HeaderFlag.Last;
    codec.writeOrder(dv, 0, r);
    expect(bytes[131]).toBe(OrderFlag.HasClientId | OrderFlag.ReduceOnly);
    expect(bytes[23]).toBe(HeaderFlag.Last);
    const h = { seq: 0, timeUs: 0, requestId: 0, frontId: 0, type: 0, flags: 0 };
    codec.readHeader(dv, 0, h);
    expect(h.flags).toBe(HeaderFlag.Last);
    const back = codec.newOrderRec();
    codec.readOrder(dv, 0, back);
    expect(back.flags).toBe(HeaderFlag.Last);
    expect(back.orderFlags).toBe(r.orderFlags);
    // PostOnly and Last are both bit 0 of their own byte: neither leaks into the other.
    r.orderFlags = OrderFlag.PostOnly;
    r.flags = 0;
    codec.writeOrder(dv, 0, r);
    expect(bytes[23]).toBe(0);
    expect(bytes[131]).toBe(OrderFlag.PostOnly);
  });
});

describe('Trade.buyerIsMaker', () => {
  it('is one byte 0/1, and any nonzero byte reads as true', () => {
    const { dv, bytes } = slot();
    const r = codec.newTradeRec();
    r.buyerIsMaker = true;
    codec.writeTrade(dv, 0, r);
    expect(bytes[66]).toBe(1);
    r.buyerIsMaker = false;
    codec.writeTrade(dv, 0, r);
    expect(bytes[66]).toBe(0);
    bytes[66] = 0x80;
    codec.readTrade(dv, 0, r);
    expect(r.buyerIsMaker).toBe(true);
  });
});

describe('copyBytes', () => {
  it('stamps a raw inbound command into a Stamped record that reads back as the command', () => {
    const inbound = slot();
    const outbound = slot();
    const c = sampleCommand();
    codec.writeCommand(inbound.dv, codec.SLOT_BYTES, c);
    const off = 40;
    codec.writeHeader(outbound.dv, off, header(RecordType.Stamped));
    codec.copyBytes(inbound.bytes, codec.SLOT_BYTES, outbound.bytes, off + codec.STAMPED_COMMAND_OFFSET, codec.COMMAND_BYTES);
    const s = codec.newStampedRec();
    codec.readStamped(outbound.dv, off, s);
    expect(s).toEqual({ ...header(RecordType.Stamped), command: c });
    // Identical to encoding the stamped record directly.
    const direct = slot();
    codec.writeStamped(direct.dv, off, s);
    expect(Array.from(outbound.bytes.subarray(off, off + codec.STAMPED_BYTES))).toEqual(
      Array.from(direct.bytes.subarray(off, off + codec.STAMPED_BYTES)),
    );
  });

  it('copies exactly the range and nothing else', () => {
    const src = Uint8Array.from({ length: 64 }, (_, i) => i + 1);
    const dst = new Uint8Array(64).fill(0xee);
    codec.copyBytes(src, 10, dst, 20, 7);
    expect(Array.from(dst.subarray(20, 27))).toEqual([11, 12, 13, 14, 15, 16, 17]);
    expect(dst[19]).toBe(0xee);
    expect(dst[27]).toBe(0xee);
    codec.copyBytes(src, 0, dst, 0, 0);
    expect(dst[0]).toBe(0xee);
  });

  it('handles overlapping ranges of one buffer in both directions, also through views', () => {
    const make = () => Uint8Array.from({ length: 32 }, (_, i) => i);
    const a = make();
    codec.copyBytes(a, 0, a, 4, 10);
    expect(Array.from(a.subarray(4, 14))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const b = make();
    codec.copyBytes(b, 4, b, 0, 10);
    expect(Array.from(b.subarray(0, 10))).toEqual([4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
    const c = make();
    const view = c.subarray(2); // same buffer, different byteOffset
    codec.copyBytes(c, 0, view, 0, 10); // dst starts 2 bytes after src
    expect(Array.from(c.subarray(2, 12))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('throws instead of silently dropping out-of-range bytes', () => {
    const a = new Uint8Array(16);
    const b = new Uint8Array(16);
    expect(() => codec.copyBytes(a, 8, b, 0, 9)).toThrow(RangeError);
    expect(() => codec.copyBytes(a, 0, b, 8, 9)).toThrow(RangeError);
    expect(() => codec.copyBytes(a, -1, b, 0, 4)).toThrow(RangeError);
    expect(() => codec.copyBytes(a, 0, b, 0, -1)).toThrow(RangeError);
  });
});

describe('crc32', () => {
  const text = (s: string) => new TextEncoder().encode(s);

  it('matches the standard check values', () => {
    const v = text('123456789');
    expect(codec.crc32(v, 0, v.length, 0)).toBe(0xcbf43926);
    expect(codec.crc32(new Uint8Array(0), 0, 0, 0)).toBe(0);
    const a = text('a');
    expect(codec.crc32(a, 0, 1, 0)).toBe(0xe8b7be43);
    const fox = text('The quick brown fox jumps over the lazy dog');
    expect(codec.crc32(fox, 0, fox.length, 0)).toBe(0x414fa339);
  });

  it('respects off/len', () => {
    const v = text('xx123456789yyy');
    expect(codec.crc32(v, 2, 9, 0)).toBe(0xcbf43926);
    expect(() => codec.crc32(v, 10, 5, 0)).toThrow(RangeError);
  });

  it('chains: crc(a ++ b) = crc(b) continued from crc(a)', () => {
    const all = text('The quick brown fox jumps over the lazy dog');
    for (const cut of [0, 1, 9, 20, all.length]) {
      const first = codec.crc32(all, 0, cut, 0);
      expect(codec.crc32(all, cut, all.length - cut, first)).toBe(0x414fa339);
    }
  });

  it('agrees with zlib.crc32 on random data, including chaining, and is always a uint32', () => {
    let x = 12345;
    for (let n = 0; n < 50; n++) {
      const len = (n * 37) % 400;
      const bytes = new Uint8Array(len);
      for (let i = 0; i < len; i++) {
        x = (Math.imul(x, 1103515245) + 12345) >>> 0;
        bytes[i] = x >>> 24;
      }
      const prev = Math.imul(n, 0x9e3779b1) >>> 0;
      const ours = codec.crc32(bytes, 0, len, prev);
      expect(ours).toBe(zlibCrc32(bytes, prev));
      expect(ours).toBeGreaterThanOrEqual(0);
      expect(ours).toBeLessThan(2 ** 32);
      expect(Number.isInteger(ours)).toBe(true);
    }
  });

  it('crc32View (slice-by-8 over a DataView) agrees with crc32 at every offset, length and alignment', () => {
    let x = 777;
    const raw = new Uint8Array(600);
    for (let i = 0; i < raw.length; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      raw[i] = x >>> 24;
    }
    for (const shift of [0, 1, 2, 3]) {
      const bytes = raw.subarray(shift);
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
      for (let n = 0; n < 60; n++) {
        const off = (n * 29) % 200;
        const len = (n * 41) % 380;
        const prev = Math.imul(n + shift, 0x9e3779b1) >>> 0;
        const expected = codec.crc32(bytes, off, len, prev);
        expect(codec.crc32View(view, off, len, prev)).toBe(expected);
        expect(expected).toBe(zlibCrc32(bytes.subarray(off, off + len), prev));
      }
    }
    const check = text('123456789');
    expect(codec.crc32View(new DataView(check.buffer), 0, check.length, 0)).toBe(0xcbf43926);
    expect(() => codec.crc32View(new DataView(check.buffer), 5, 5, 0)).toThrow(RangeError);
  });

  it('detects a single flipped bit in a journal-sized record', () => {
    const { dv, bytes } = slot();
    codec.writeStamped(dv, 0, { ...header(RecordType.Stamped), command: sampleCommand() });
    const good = codec.crc32(bytes, 0, codec.JOURNAL_CHECKSUM_OFFSET, 0x1234_5678);
    for (let i = 0; i < codec.JOURNAL_CHECKSUM_OFFSET; i += 13) {
      bytes[i] ^= 4;
      expect(codec.crc32(bytes, 0, codec.JOURNAL_CHECKSUM_OFFSET, 0x1234_5678)).not.toBe(good);
      bytes[i] ^= 4;
    }
  });
});

describe('emitters into a RecordSink, and decodeRecord', () => {
  it('encodes at the claimed offset, reports it written, and decodes back to the same record', () => {
    const view = new DataView(new ArrayBuffer(3 * codec.SLOT_BYTES));
    const written: number[] = [];
    const sink = { view, claim: () => codec.SLOT_BYTES, written: (at: number) => written.push(at) };
    const rec = codec.newTradeRec();
    Object.assign(rec, { seq: 5, timeUs: 6, requestId: 7, frontId: 8, flags: 1, tradeId: 9, priceTicks: 10, qtyLots: 11, marketId: 3, buyerIsMaker: true });
    codec.emitTrade(sink, rec);
    expect(written).toEqual([codec.SLOT_BYTES]);
    expect(codec.decodeRecord(view, codec.SLOT_BYTES)).toEqual(rec);
    expect(view.getUint8(0)).toBe(0);
  });

  it('refuses a record type the engine does not write', () => {
    const view = new DataView(new ArrayBuffer(codec.SLOT_BYTES));
    codec.writeStamped(view, 0, codec.newStampedRec());
    expect(() => codec.decodeRecord(view, 0)).toThrow(RangeError);
  });
});
