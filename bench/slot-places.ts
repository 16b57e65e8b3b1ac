// Record places with no consumer behind them, for the benches that drive the engine without a
// ring (engine-ceiling.bench.ts, engine-drive.ts): each record is written into the next of `count`
// slots of `slotBytes`, round the buffer, and counted. RefusalCount takes every record into one
// slot and counts the results that are not Ok (engine-margin.bench.ts, engine-hourly.bench.ts).

import { SLOT_BYTES, decodeRecord, recordType } from '../engine/bus/codec.js';
import { RecordType, ResultCode, type RecordSink } from '../engine/bus/types.js';

export class SlotPlaces {
  readonly bytes: Uint8Array;
  readonly view: DataView;
  records = 0;
  private off = 0;
  private readonly span: number;

  constructor(count: number, private readonly slotBytes: number) {
    this.span = count * slotBytes;
    this.bytes = new Uint8Array(this.span);
    this.view = new DataView(this.bytes.buffer);
  }

  claim(): number {
    const off = this.off;
    this.off = (off + this.slotBytes) % this.span;
    this.records++;
    return off;
  }

  written(): void {}
}

/** Every record into one slot; counts the results that are not Ok. */
export class RefusalCount implements RecordSink {
  readonly view = new DataView(new ArrayBuffer(SLOT_BYTES));
  refused = 0;

  claim(): number {
    return 0;
  }

  written(at: number): void {
    if (recordType(this.view, at) !== RecordType.Result) return;
    const rec = decodeRecord(this.view, at);
    if (rec.type === RecordType.Result && rec.code !== ResultCode.Ok) this.refused++;
  }
}
