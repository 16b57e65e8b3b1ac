// Disk growth of the LMDB journal environment under sustained order flow.
//
// LMDB copies every page a write transaction touches and can reuse a freed page only once no
// read transaction still sees a snapshot older than the write that freed it. A reader that stays
// open therefore turns every later write into new file pages. These tests read LMDB's reader
// table (pid, thread, snapshot txn id per slot) from outside the server and measure the data file
// in bytes, so nothing here depends on how fast the machine is.

import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, type RootDatabase } from 'lmdb';
import { ORDER_BYTES, newOrderRec, writeOrder } from '../../engine/bus/codec.js';
import { AccountHistoryReader, openHistoryDbs } from '../../engine/store/history-account.js';
import { createTestAccount, removeDir, signed, startServer, tempDataDir, type RunningServer, type TestAccount } from '../helpers/server.js';

const BURST_ORDERS = 2_000;
/** Live data per order (journal record, order and fill history) is about 1 KiB; copied pages were 20-60 KiB. */
const MAX_BYTES_PER_ORDER = 4_096;
const READER_DEADLINE_MS = 30_000;

interface ReaderSlot {
  pid: number;
  thread: string;
  /** The snapshot the slot holds, or null for an idle slot. */
  txnId: number | null;
}

/** Parses lmdb's reader list ("pid thread txnid" per slot, "-" for an idle one). */
function readerSlots(env: RootDatabase): ReaderSlot[] {
  const slots: ReaderSlot[] = [];
  for (const line of env.readerList().split('\n')) {
    const match = /^\s*(\d+)\s+([0-9a-f]+)\s+(\d+|-)\s*$/.exec(line);
    if (match) slots.push({ pid: Number(match[1]), thread: match[2], txnId: match[3] === '-' ? null : Number(match[3]) });
  }
  return slots;
}

/** Waits until no slot of `pid` holds a snapshot at or before `txnId`; returns the slots that still do. */
async function pinnedReaders(env: RootDatabase, pid: number, txnId: number): Promise<ReaderSlot[]> {
  const deadline = Date.now() + READER_DEADLINE_MS;
  for (;;) {
    const pinned = readerSlots(env).filter((s) => s.pid === pid && s.txnId !== null && s.txnId <= txnId);
    if (pinned.length === 0 || Date.now() > deadline) return pinned;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('journal file growth under sustained orders', () => {
  const dataDir = tempDataDir();
  const dataFile = join(dataDir, 'journal', 'data.mdb');
  let server: RunningServer;
  let env: RootDatabase;
  let maker: TestAccount;
  let taker: TestAccount;

  /** `orders` orders, one at a time: a resting bid, then an ask that fills it. */
  const burst = async (orders: number): Promise<Record<number, number>> => {
    const statuses: Record<number, number> = {};
    const place = async (account: TestAccount, side: string): Promise<void> => {
      const r = await signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', side, orderType: 'Limit', price: '150', quantity: '0.1' });
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    };
    for (let i = 0; i < orders; i += 2) {
      await place(maker, 'Bid');
      await place(taker, 'Ask');
    }
    return statuses;
  };

  beforeAll(async () => {
    server = await startServer({ dataDir, args: ['--no-demo', '--front-threads', '2', '--speed-bump-ms', '0'] });
    maker = await createTestAccount(server.adminPort, ['USDC=1000000']);
    taker = await createTestAccount(server.adminPort, ['SOL=10000']);
    env = open({ path: join(dataDir, 'journal'), readOnly: true });
  });

  afterAll(async () => {
    await env?.close();
    await server?.stop();
    removeDir(dataDir);
  });

  it('releases every read snapshot and reuses freed pages: a second burst grows the file by its live data only', async () => {
    expect(await burst(BURST_ORDERS)).toEqual({ 200: BURST_ORDERS });
    const afterFirst = statSync(dataFile).size;
    const txnAfterFirst = (env.getStats() as { lastTxnId: number }).lastTxnId;

    // History pages across all markets that stop before the ranges run out (limit 1).
    for (const path of ['/wapi/v1/history/orders', '/wapi/v1/history/fills']) {
      const instruction = path.endsWith('orders') ? 'orderHistoryQueryAll' : 'fillHistoryQueryAll';
      for (const account of [maker, taker]) {
        const page = await signed(server.base, account, 'GET', path, instruction, { limit: 1 });
        expect(page.status).toBe(200);
        expect(page.body).toHaveLength(1);
      }
    }

    expect(await burst(BURST_ORDERS)).toEqual({ 200: BURST_ORDERS });
    const grown = statSync(dataFile).size - afterFirst;

    // Every thread of the server has ended the snapshot it read through before the second burst
    // (recovery's in the engine worker, the history pages' in the front threads).
    const pinned = await pinnedReaders(env, server.child.pid!, txnAfterFirst);
    expect.soft(grown / BURST_ORDERS, `data file grew ${grown} bytes over ${BURST_ORDERS} orders`).toBeLessThanOrEqual(MAX_BYTES_PER_ORDER);
    expect(pinned, `server readers still at or before txn ${txnAfterFirst}:\n${env.readerList()}`).toEqual([]);
  }, 600_000);
});

describe('account history reader', () => {
  const dataDir = tempDataDir();
  let root: RootDatabase;

  beforeAll(() => {
    root = open({ path: join(dataDir, 'journal'), maxDbs: 16 });
  });

  afterAll(async () => {
    await root?.close();
    removeDir(dataDir);
  });

  it('a listing across markets that stops at its page limit leaves no read snapshot open', async () => {
    const { history } = openHistoryDbs(root);
    // Six orders of account 7 alternating between two markets, each with its index entry.
    for (let orderId = 1; orderId <= 6; orderId++) {
      const rec = newOrderRec();
      rec.orderId = orderId;
      rec.accountId = 7;
      rec.marketId = orderId % 2;
      const bytes = Buffer.alloc(ORDER_BYTES);
      writeOrder(new DataView(bytes.buffer, bytes.byteOffset, bytes.length), 0, rec);
      history.putSync(['o', 7, orderId], bytes);
      history.putSync(['om', 7, rec.marketId, 1_000 + orderId, orderId], Buffer.alloc(0));
    }
    const reader = new AccountHistoryReader(root, 2);
    const page = reader.orders(7, {}, { limit: 2, offset: 0, descending: true });
    expect(page.map((o) => o.orderId)).toEqual([6, 5]);

    // lmdb-js ends a thread's read transaction from a zero-delay timer scheduled by the read, but
    // a cursor left open keeps that transaction alive (until the garbage collector happens to
    // reclaim it). Once a later timer has run, this process must hold no snapshot at all.
    await new Promise((r) => setTimeout(r, 0));
    await new Promise((r) => setImmediate(r));
    const held = readerSlots(root).filter((s) => s.pid === process.pid && s.txnId !== null);
    expect(held, root.readerList()).toEqual([]);
  });
});
