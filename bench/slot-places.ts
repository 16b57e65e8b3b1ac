// Record places with no consumer behind them, for the benches that drive the engine without a
// ring (engine-ceiling.bench.ts, engine-drive.ts): each record is written into the next of `count`
// slots of `slotBytes`, round the buffer, and counted.

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
