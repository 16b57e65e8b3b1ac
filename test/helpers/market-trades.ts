// A small, known trade tape for the market-data suites: a maker rests asks at 20, 21 and 22 and a
// bid at 19 on SOL_USDC; a taker buys 0.5, then 1 (0.5 at 20, 0.5 at 21), then sells 1 into the
// bid. Four trades, in this order:
//   id 1: 0.5 @ 20 (taker buys)   id 2: 0.5 @ 20 (taker buys)
//   id 3: 0.5 @ 21 (taker buys)   id 4: 1 @ 19 (taker sells, buyer is maker)
// Totals: volume 2.5 SOL, quote volume 49.5 USDC, first 20, last 19, high 21, low 19.

import { expect } from 'vitest';
import { createTestAccount, signed, type RunningServer, type TestAccount } from './server.js';

export const TAPE = [
  { id: 1, price: '20', quantity: '0.5', quoteQuantity: '10', isBuyerMaker: false },
  { id: 2, price: '20', quantity: '0.5', quoteQuantity: '10', isBuyerMaker: false },
  { id: 3, price: '21', quantity: '0.5', quoteQuantity: '10.5', isBuyerMaker: false },
  { id: 4, price: '19', quantity: '1', quoteQuantity: '19', isBuyerMaker: true },
];

export interface Tape {
  maker: TestAccount;
  taker: TestAccount;
  /** Wall-clock ms before the first and after the last trade. */
  startedMs: number;
  endedMs: number;
}

export async function placeOrder(server: RunningServer, account: TestAccount, body: Record<string, string>) {
  const placed = await signed(server.base, account, 'POST', '/api/v1/order', 'orderExecute', { symbol: 'SOL_USDC', ...body });
  expect(placed.status, placed.text).toBe(200);
  return placed.body;
}

export async function tradeTape(server: RunningServer): Promise<Tape> {
  const maker = await createTestAccount(server.adminPort, ['SOL=100', 'USDC=1000']);
  const taker = await createTestAccount(server.adminPort, ['SOL=10', 'USDC=10000']);
  for (const [side, price, quantity] of [['Ask', '20', '1'], ['Ask', '21', '1'], ['Ask', '22', '1'], ['Bid', '19', '2']]) {
    await placeOrder(server, maker, { side, orderType: 'Limit', price, quantity, postOnly: 'true' });
  }
  const startedMs = Date.now();
  await placeOrder(server, taker, { side: 'Bid', orderType: 'Market', quantity: '0.5' });
  await placeOrder(server, taker, { side: 'Bid', orderType: 'Market', quantity: '1' });
  await placeOrder(server, taker, { side: 'Ask', orderType: 'Market', quantity: '1' });
  return { maker, taker, startedMs, endedMs: Date.now() };
}
