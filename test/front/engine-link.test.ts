// The front thread's side of the inbound ring when the engine cannot keep up: a full ring is
// answered at once with HTTP 503 and a JSON error, every command that was accepted is in the ring
// whole and in order, nothing is half-written, and the link takes commands again once the engine
// has drained the ring.

import { describe, expect, it } from 'vitest';
import { InboundRing, OutboundRing } from '../../engine/bus/ring.js';
import { SLOT_BYTES, newOrderRec, newResultRec, readCommand, readCommandSlot, readResult, writeOrder, writeResult } from '../../engine/bus/codec.js';
import { Control } from '../../engine/bus/control.js';
import { CommandKind, FRONT_ID_NONE, HeaderFlag, OrderEvent, RecordType, ResultCode, newCommand, newCommandSlot } from '../../engine/bus/types.js';
import { EngineLink } from '../../src/front/engine-link.js';
import { callEngine, type FrontContext } from '../../src/front/context.js';
import type { RequestContext } from '../../src/front/http.js';

function fakeResponse() {
  const written = { status: '', headers: {} as Record<string, string>, body: '' };
  const res = {
    cork(cb: () => void) { cb(); return res; },
    writeStatus(status: string) { written.status = status; return res; },
    writeHeader(key: string, value: string) { written.headers[key] = value; return res; },
    end(body: string) { written.body = body; return res; },
  };
  return { res, written };
}

function setup(slotCount: number) {
  const inbound = InboundRing.create({ slotCount, slotBytes: SLOT_BYTES });
  const outbound = OutboundRing.create({ slotCount: 16, slotBytes: SLOT_BYTES, consumerCount: 1 });
  const control = Control.create();
  const link = new EngineLink(3, inbound.sab, outbound.sab, 0, control.sab, 1000);
  return { inbound, link };
}

const ignore = { onRecord() {} };

describe('EngineLink on a full inbound ring', () => {
  it('reports ring_full once every slot is taken, and every accepted command is whole', () => {
    const { inbound, link } = setup(8);
    const results: string[] = [];
    for (let i = 0; i < 10; i++) {
      results.push(link.submit((cmd) => {
        cmd.kind = CommandKind.PlaceOrder;
        cmd.placeOrder.qtyLots = 1000 + i;
        cmd.placeOrder.priceTicks = 2000 + i;
        cmd.placeOrder.accountId = 7;
      }, ignore));
    }
    expect(results).toEqual([...Array(8).fill('ok'), 'ring_full', 'ring_full']);
    expect(link.pendingCount).toBe(8);

    const seen: Array<[number, number, number, number]> = [];
    const cmd = newCommand();
    inbound.poll((offset) => {
      readCommand(inbound.view, offset, cmd);
      seen.push([cmd.kind, cmd.placeOrder.qtyLots, cmd.placeOrder.priceTicks, cmd.frontId]);
    }, 100);
    expect(seen).toEqual(Array.from({ length: 8 }, (_, i) => [CommandKind.PlaceOrder, 1000 + i, 2000 + i, 3]));

    // Drained: the link accepts again.
    expect(link.submit((c) => { c.kind = CommandKind.QueryBalances; }, ignore)).toBe('ok');
  });

  it('publishes a None command, not stale bytes, when encoding a claimed command fails', () => {
    const { inbound, link } = setup(4);
    expect(() => link.submit((cmd) => { cmd.kind = CommandKind.Deposit; cmd.deposit.amountUnits = 1.5; }, ignore)).not.toThrow();
    const cmd = newCommand();
    const seenSlot = newCommandSlot();
    let count = 0;
    inbound.poll((offset) => {
      readCommand(inbound.view, offset, cmd);
      readCommandSlot(inbound.view, offset, seenSlot);
      count += 1;
    }, 10);
    expect(count).toBe(1);
    expect(cmd.kind).toBe(CommandKind.None);
    expect(seenSlot.amountUnits).toBe(0); // the deposit's amount never reached the slot
  });

  it('answers HTTP 503 with a JSON error body when the ring is full', () => {
    const { link } = setup(2);
    const front = { link } as unknown as FrontContext;
    const bodies: string[] = [];
    const submitted: boolean[] = [];
    for (let i = 0; i < 3; i++) {
      const { res, written } = fakeResponse();
      const ctx = { res, aborted: false, done: false } as unknown as RequestContext;
      submitted.push(callEngine(front, ctx, (cmd) => { cmd.kind = CommandKind.QueryBalances; }, ignore));
      bodies.push(written.status ? `${written.status} ${written.body}` : 'pending');
    }
    expect(bodies[0]).toBe('pending');
    expect(bodies[1]).toBe('pending');
    expect(bodies[2]).toMatch(/^503 /);
    // The caller learns which commands were not submitted (a withdrawal drops its stored intent).
    expect(submitted).toEqual([true, true, false]);
    expect(JSON.parse(bodies[2].slice(bodies[2].indexOf('{')))).toEqual({ code: 'TOO_MANY_REQUESTS', message: expect.any(String) });
  });
});

describe('EngineLink draining the outbound ring', () => {
  it('holds records until durable, and survives a handler that throws', async () => {
    const inbound = InboundRing.create({ slotCount: 8, slotBytes: SLOT_BYTES });
    const outbound = OutboundRing.create({ slotCount: 16, slotBytes: SLOT_BYTES, consumerCount: 1 });
    const control = Control.create();
    const errors: unknown[] = [];
    const link = new EngineLink(3, inbound.sab, outbound.sab, 0, control.sab, 100, (e) => errors.push(e));
    const answered: number[] = [];
    const events: number[] = [];
    const boom = { onRecord() { throw new Error('formatting bug'); } };
    const fine = { onRecord(_t: unknown, _v: unknown, _o: unknown, h: { seq: number }) { answered.push(h.seq); } };
    expect(link.submit((c) => { c.kind = CommandKind.QueryBalances; }, boom)).toBe('ok'); // requestId 1
    expect(link.submit((c) => { c.kind = CommandKind.QueryBalances; }, fine)).toBe('ok'); // requestId 2
    const rec = newResultRec();
    const put = (seq: number, frontId: number, requestId: number) => {
      const s = outbound.tryClaim();
      rec.seq = seq; rec.frontId = frontId; rec.requestId = requestId; rec.flags = HeaderFlag.Last; rec.code = ResultCode.Ok;
      writeResult(outbound.view, outbound.offsetOf(s), rec);
      outbound.publish(s);
    };
    put(1, 3, 1);
    put(2, FRONT_ID_NONE, 0);
    put(3, 3, 2);
    outbound.flush();
    link.start({ onEvent: (_t, _v, _o, h) => events.push(h.seq), onBatchEnd() {} });
    try {
      // Nothing is durable yet: nothing may be handed out.
      await new Promise((r) => setImmediate(r));
      expect(answered).toEqual([]);
      expect(events).toEqual([]);
      control.setSeqDurable(3);
      outbound.signal();
      const deadline = Date.now() + 10_000;
      while (answered.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      expect(answered).toEqual([3]);
      expect(events).toEqual([2]);
      expect(errors).toHaveLength(1);
      expect(link.pendingCount).toBe(0);
    } finally {
      link.stop();
    }
  });
});

describe('EngineLink delivering an answer that carries its order\'s event', () => {
  /** Front threads 3, 4, … on one pair of rings; `put` publishes an Order record answering front 3. */
  function fronts(count: number) {
    const inbound = InboundRing.create({ slotCount: 8, slotBytes: SLOT_BYTES });
    const outbound = OutboundRing.create({ slotCount: 16, slotBytes: SLOT_BYTES, consumerCount: count });
    const control = Control.create();
    const errors: unknown[] = [];
    const links = Array.from({ length: count }, (_, i) => new EngineLink(3 + i, inbound.sab, outbound.sab, i, control.sab, 100, (e) => errors.push(e)));
    const rec = newOrderRec();
    const put = (seq: number, requestId: number, flags: number, event: OrderEvent) => {
      const s = outbound.tryClaim();
      rec.seq = seq; rec.frontId = 3; rec.requestId = requestId; rec.flags = flags; rec.type = RecordType.Order; rec.event = event;
      writeOrder(outbound.view, outbound.offsetOf(s), rec);
      outbound.publish(s);
    };
    /** Makes everything through `seq` durable and waits until `done`. */
    const release = async (seq: number, done: () => boolean) => {
      outbound.flush();
      control.setSeqDurable(seq);
      outbound.signal();
      const deadline = Date.now() + 10_000;
      while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    };
    return { links, errors, put, release };
  }

  it('answers the request on the owner front and streams the event on every front', async () => {
    const { links: [owner, other], errors, put, release } = fronts(2);
    const answered: number[] = [];
    const events = { owner: [] as number[], other: [] as number[] };
    const answer = { onRecord(_t: unknown, _v: unknown, _o: unknown, h: { seq: number }) { answered.push(h.seq); } };
    expect(owner.submit((c) => { c.kind = CommandKind.CancelOrder; }, answer)).toBe('ok'); // requestId 1
    expect(owner.submit((c) => { c.kind = CommandKind.CancelOrder; }, answer)).toBe('ok'); // requestId 2
    put(1, 1, HeaderFlag.Last | HeaderFlag.Event, OrderEvent.Cancelled);
    put(2, 2, HeaderFlag.Last, OrderEvent.None);
    owner.start({ onEvent: (_t, _v, _o, h) => events.owner.push(h.seq), onBatchEnd() {} });
    other.start({ onEvent: (_t, _v, _o, h) => events.other.push(h.seq), onBatchEnd() {} });
    try {
      await release(2, () => answered.length === 2 && events.other.length > 0);
      // Both answers reach their requests; only the one flagged Event is also a stream event, on both fronts.
      expect(answered).toEqual([1, 2]);
      expect(events).toEqual({ owner: [1], other: [1] });
      expect(errors).toEqual([]);
    } finally {
      owner.stop();
      other.stop();
    }
  });

  it('still streams the event when the answer\'s handler throws, and reports the error once', async () => {
    const { links: [link], errors, put, release } = fronts(1);
    const events: number[] = [];
    expect(link.submit((c) => { c.kind = CommandKind.CancelOrder; }, { onRecord() { throw new Error('formatting bug'); } })).toBe('ok');
    put(1, 1, HeaderFlag.Last | HeaderFlag.Event, OrderEvent.Cancelled);
    link.start({ onEvent: (_t, _v, _o, h) => events.push(h.seq), onBatchEnd() {} });
    try {
      await release(1, () => events.length > 0);
      expect(events).toEqual([1]);
      expect(errors).toHaveLength(1);
      expect(link.pendingCount).toBe(0);
    } finally {
      link.stop();
    }
  });
});

describe('EngineLink when the outbound ring is under pressure', () => {
  it('copies non-durable records out to free their slots, and releases them in ring order only once durable', async () => {
    const inbound = InboundRing.create({ slotCount: 8, slotBytes: SLOT_BYTES });
    const outbound = OutboundRing.create({ slotCount: 4, slotBytes: SLOT_BYTES, consumerCount: 1 });
    const control = Control.create();
    const link = new EngineLink(3, inbound.sab, outbound.sab, 0, control.sab, 100);
    const events: number[] = [];
    const rec = newResultRec();
    let written = 0;
    /** Writes as many records of command `seq` as the ring takes; returns how many it wrote. */
    const fill = (seq: number, count: number): number => {
      let n = 0;
      for (; n < count; n++) {
        const s = outbound.tryClaim();
        if (s < 0) break;
        rec.seq = seq; rec.frontId = FRONT_ID_NONE; rec.requestId = 0; rec.flags = 0; rec.code = ResultCode.Ok;
        rec.value = written++;
        writeResult(outbound.view, outbound.offsetOf(s), rec);
        outbound.publish(s);
      }
      outbound.flush();
      return n;
    };
    link.start({ onEvent: (_t, v, o) => { readResultValue(v, o, events); }, onBatchEnd() {} });
    try {
      // One command with 10 outputs through a 4-slot ring, none of them durable: the ring must
      // keep freeing, and nothing may be handed out yet.
      let left = 10;
      const deadline = Date.now() + 10_000;
      while (left > 0 && Date.now() < deadline) {
        left -= fill(7, left);
        await new Promise((r) => setTimeout(r, 1));
      }
      expect(left).toBe(0);
      expect(events).toEqual([]);
      expect(link.heldCount).toBeGreaterThan(0);
      // Durable: every record, in order.
      control.setSeqDurable(7);
      outbound.signal();
      while (events.length < 10 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      expect(events).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(link.heldCount).toBe(0);
    } finally {
      link.stop();
    }
  });

  it('leaves non-durable records in a ring that is not under pressure', async () => {
    const inbound = InboundRing.create({ slotCount: 8, slotBytes: SLOT_BYTES });
    const outbound = OutboundRing.create({ slotCount: 64, slotBytes: SLOT_BYTES, consumerCount: 1 });
    const control = Control.create();
    const link = new EngineLink(3, inbound.sab, outbound.sab, 0, control.sab, 100);
    const rec = newResultRec();
    const s = outbound.tryClaim();
    rec.seq = 5; rec.frontId = FRONT_ID_NONE; rec.code = ResultCode.Ok;
    writeResult(outbound.view, outbound.offsetOf(s), rec);
    outbound.publish(s);
    outbound.flush();
    link.start({ onEvent() {}, onBatchEnd() {} });
    try {
      await new Promise((r) => setTimeout(r, 5));
      expect(link.heldCount).toBe(0);
      expect(outbound.consumer(0).sequence).toBe(0);
    } finally {
      link.stop();
    }
  });
});

function readResultValue(view: DataView, offset: number, into: number[]): void {
  const rec = newResultRec();
  readResult(view, offset, rec);
  into.push(rec.value);
}
