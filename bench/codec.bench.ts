// Micro-benchmark: engine/bus/codec.ts (DataView, constant offsets, numbers) against the generated
// FlatBuffers accessors (bigint per 64-bit field, allocation per struct/header accessor) for the
// hottest record, plus crc32 over one journal record. Run after a build:
//   node dist/bench/codec.bench.js
import { Bench } from 'tinybench';
import * as flatbuffers from 'flatbuffers';
import { OrderRecord } from '../schemas/generated/exchange/schema.js';
import {
  JOURNAL_CHECKSUM_OFFSET,
  ORDER_BYTES,
  SLOT_BYTES,
  crc32,
  newOrderRec,
  readOrder,
  writeOrder,
} from '../engine/bus/codec.js';

const bytes = new Uint8Array(new SharedArrayBuffer(SLOT_BYTES * 4));
const dv = new DataView(bytes.buffer);
const rec = newOrderRec();
rec.seq = 123_456_789;
rec.timeUs = 1_735_689_600_000_000;
rec.orderId = 0x1_2345_6789;
rec.priceTicks = 101_250;
rec.qtyLots = 3_000;
rec.executedQtyLots = 1_000;
rec.accountId = 42;
rec.marketId = 3;
writeOrder(dv, SLOT_BYTES, rec);

const bb = new flatbuffers.ByteBuffer(bytes);
const generated = new OrderRecord();
let sink = 0;

const bench = new Bench({ time: 500 });
bench
  .add('codec readOrder (all fields)', () => {
    readOrder(dv, SLOT_BYTES, rec);
    sink += rec.qtyLots;
  })
  .add('generated OrderRecord, 11 longs + header as numbers', () => {
    const o = generated.__init(SLOT_BYTES, bb);
    const h = o.header()!;
    sink +=
      Number(h.seq()) +
      Number(h.timeUs()) +
      Number(o.orderId()) +
      Number(o.priceTicks()) +
      Number(o.qtyLots()) +
      Number(o.quoteQtyUnits()) +
      Number(o.executedQtyLots()) +
      Number(o.executedQuoteUnits()) +
      Number(o.lastFillQtyLots()) +
      Number(o.lastFillPriceTicks()) +
      Number(o.tradeId()) +
      Number(o.feeUnits()) +
      Number(o.createdAtUs()) +
      o.accountId();
  })
  .add('codec writeOrder', () => {
    writeOrder(dv, SLOT_BYTES * 2, rec);
  })
  .add(`crc32 over ${JOURNAL_CHECKSUM_OFFSET} bytes`, () => {
    sink ^= crc32(bytes, SLOT_BYTES, JOURNAL_CHECKSUM_OFFSET, sink >>> 0);
  });

await bench.run();
console.table(bench.table());
console.log(`(${ORDER_BYTES}-byte order record; sink ${sink & 1})`);
