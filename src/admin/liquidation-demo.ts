// `npm run admin -- liquidation-demo`: a liquidation of a perpetual position, end to end, on a
// running exchange, for an operator to watch. It uses the admin endpoint only for what an operator
// does (creating and funding accounts, setting SOL's index price, reading the insurance fund) and
// the public API the way a client does (signed REST requests, WebSocket streams: api-client.ts).
//
//   1. A small account is created with `deposit` USDC (default 300) and its keys are printed. The
//      market maker is the account whose keys are given (a demo account of `npm start`, say), or a
//      fresh account funded with MAKER_DEPOSIT USDC.
//   2. SOL's index starts where it is when fresh, else at `startPrice` (set by the operator). The
//      maker quotes SOL_USDC_PERP around it: QUOTE_LEVELS post-only bids and asks, QUOTE_STEP_BPS
//      apart, each as large as the small account's position. The small account raises its
//      leverage limit to `leverage` + 1 and buys a position of `leverage` × its deposit at market.
//   3. One stream connection subscribes the small account's account.orderUpdate and
//      account.positionUpdate (signed), then the public `liquidation` stream and the perpetual's
//      depth (whose first message, answering the maker's quotes, shows every subscription is in
//      place). Every message of the first three is printed as it arrives.
//   4. While the account holds a position: when it is not liquidating, SOL's index moves down by
//      `stepBps` of the starting price and the maker requotes around it (as a maker following the
//      index would; its bids are what the liquidation's orders sell into); while it is liquidating,
//      the engine's liquidation steps (one a second of engine time) run and the command waits for
//      their messages, setting the index again every INDEX_REFRESH_MS so that it never goes stale
//      (a stale operator price would hand SOL's index to the default from the spot book). It stops
//      when the position is closed, or after `maxSteps` moves.
//   5. It prints the account's liquidation fills by fill type (BookLiquidation, Adl), its system
//      orders, and the USDC insurance fund's lines before and after; then the maker cancels its
//      quotes and SOL's index is set back to the starting price (also after a failure).
//
// The result is a summary; the command fails (exit 1) when no liquidation fill of the account was
// seen. Prices and quantities are counted in integer hundredths (SOL_USDC_PERP's tick and lot).

import { setTimeout as sleep } from 'node:timers/promises';
import { ApiClient, ApiError, StreamConnection, type ApiKeys } from './api-client.js';
import { createAccount, getIndexPrices, getInsurance, setIndexPrices, type InsuranceLineJson } from './client.js';

export const PERP_SYMBOL = 'SOL_USDC_PERP';
const ASSET = 'SOL';
/** USDC a fresh maker account is funded with. */
const MAKER_DEPOSIT = '1000000';
const QUOTE_LEVELS = 3;
/** Distance between the maker's price levels, in basis points of the price (at least one tick). */
const QUOTE_STEP_BPS = 5;
/** How often the index is set again while the command waits (the default maximum age is 30 s). */
const INDEX_REFRESH_MS = 5_000;
/** How long the command waits for a stream message before it reads the account again. */
const MESSAGE_WAIT_MS = 1_500;
/** How long the fills history (written by the journal) may take to show the fills streamed. */
const HISTORY_WAIT_MS = 15_000;
const PRINTED_STREAMS = new Set(['liquidation', 'account.orderUpdate', 'account.positionUpdate']);
const LIQUIDATION_FILL_TYPES = ['BookLiquidation', 'Adl', 'Backstop'];
const LIQUIDATION_ORIGINS = new Set(['LIQUIDATION_AUTOCLOSE', 'ADL_AUTOCLOSE']);

export interface LiquidationDemoOptions {
  /** Public API address (host and port) and the admin endpoint's port. */
  host: string;
  port: number;
  adminPort: number;
  maker: ApiKeys | null;
  /** Whole USDC the small account is funded with. */
  deposit: number;
  /** Position notional as a multiple of the deposit. */
  leverage: number;
  /** SOL's index (hundredths of USDC) when it has no fresh one. */
  startPriceCents: number;
  /** Each move of the index, in basis points of the starting price. */
  stepBps: number;
  maxSteps: number;
  print: (line: string) => void;
}

/** Hundredths as a decimal string: 14850 → "148.5". */
export function hundredths(value: number): string {
  const sign = value < 0 ? '-' : '';
  const abs = Math.abs(value);
  const fraction = String(abs % 100).padStart(2, '0').replace(/0+$/, '');
  return `${sign}${Math.floor(abs / 100)}${fraction ? `.${fraction}` : ''}`;
}

/** A decimal string as whole hundredths, the rest truncated: "148.509" → 14850. */
export function toHundredths(text: string): number {
  const match = /^(-?)(\d+)(?:\.(\d*))?$/.exec(text);
  if (!match) throw new ApiError(`not a decimal: ${JSON.stringify(text)}`);
  const value = Number(match[2]) * 100 + Number((match[3] ?? '').padEnd(2, '0').slice(0, 2));
  return match[1] === '-' ? -value : value;
}

/** The stream connection: prints what it carries and lets the command wait for the next message. */
class Watch {
  readonly messages: Array<{ stream: string; data: any }> = [];
  private wake: (() => void) | null = null;
  connection!: StreamConnection;

  constructor(private readonly print: (line: string) => void) {}

  receive(message: any): void {
    if (typeof message?.stream !== 'string') {
      if (message?.error) this.print(`stream error    ${JSON.stringify(message)}`);
      return;
    }
    this.messages.push(message);
    if (PRINTED_STREAMS.has(message.stream)) this.print(`${message.stream.padEnd(23)} ${JSON.stringify(message.data)}`);
    this.wake?.();
  }

  /** Resolves at the next message or after `ms`. */
  async next(ms: number): Promise<void> {
    const timer = sleep(ms);
    await Promise.race([timer, new Promise<void>((resolve) => {
      this.wake = resolve;
    })]);
    this.wake = null;
  }

  async until(predicate: (m: { stream: string; data: any }) => boolean, what: string, ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (!this.messages.some(predicate)) {
      if (this.connection.closed) throw new ApiError(`the stream connection closed while waiting for ${what}`);
      if (Date.now() > deadline) throw new ApiError(`no ${what} within ${ms} ms`);
      await this.next(Math.min(MESSAGE_WAIT_MS, Math.max(1, deadline - Date.now())));
    }
  }

  /** The account's own liquidation fills, as its order stream reported them. */
  liquidationFills(): any[] {
    return this.messages.filter((m) => m.stream === 'account.orderUpdate' && m.data.e === 'orderFill' && LIQUIDATION_ORIGINS.has(m.data.O)).map((m) => m.data);
  }
}

interface Actors {
  small: ApiClient;
  maker: Maker;
  smallAccount: { accountId: number; publicKey: string; secretKey: string };
  makerAccountId: number | null;
}

async function createActors(o: LiquidationDemoOptions, base: string): Promise<Actors> {
  // Keys given for the maker are checked (the secret must be the public key's) before anything is created.
  const givenMaker = o.maker === null ? null : new ApiClient(base, o.maker);
  const created = await createAccount(o.adminPort, { deposits: [{ asset: 'USDC', quantity: String(o.deposit) }] });
  const smallAccount = { accountId: created.accountId, publicKey: created.publicKey, secretKey: created.secretKey! };
  o.print(`account         ${smallAccount.accountId} created with ${o.deposit} USDC`);
  o.print(`  X-API-Key     ${smallAccount.publicKey}`);
  o.print(`  secret        ${smallAccount.secretKey}`);
  let maker = givenMaker;
  let makerAccountId: number | null = null;
  if (maker === null) {
    const funded = await createAccount(o.adminPort, { deposits: [{ asset: 'USDC', quantity: MAKER_DEPOSIT }] });
    maker = new ApiClient(base, { publicKey: funded.publicKey, secretKey: funded.secretKey! });
    makerAccountId = funded.accountId;
    o.print(`maker           ${funded.accountId} created with ${MAKER_DEPOSIT} USDC (X-API-Key ${funded.publicKey})`);
  } else {
    o.print(`maker           the account of X-API-Key ${o.maker!.publicKey}`);
  }
  return { small: new ApiClient(base, smallAccount), maker: new Maker(maker), smallAccount, makerAccountId };
}

/** SOL's index to start from: its fresh price, else the configured start (hundredths). */
async function startingPrice(o: LiquidationDemoOptions): Promise<number> {
  const listed = (await getIndexPrices(o.adminPort)).prices as Array<{ symbol: string; price: string | null; stale: boolean; source: string }>;
  const sol = listed.find((p) => p.symbol === ASSET);
  if (sol === undefined) throw new ApiError(`the exchange has no asset ${ASSET}`);
  if (sol.price !== null && !sol.stale) {
    o.print(`index           ${ASSET} is ${sol.price} (${sol.source}); starting there`);
    return toHundredths(sol.price);
  }
  o.print(`index           ${ASSET} has no fresh price; starting at ${hundredths(o.startPriceCents)}`);
  return o.startPriceCents;
}

async function setIndex(o: LiquidationDemoOptions, cents: number): Promise<void> {
  await setIndexPrices(o.adminPort, { [ASSET]: hundredths(cents) }, 'Operator');
}

/**
 * The maker's quotes. Each requote posts the new bids (below the old ones: the index only moves
 * down) before it cancels the old orders, and the new asks after: the book always has the maker's
 * bids for a liquidation step to sell into, and no new ask meets an old bid of its own.
 */
class Maker {
  private open: string[] = [];

  constructor(readonly api: ApiClient) {}

  /** Its open orders in the perpetual, whoever placed them, cancelled: a clean start. */
  async cancelAll(): Promise<void> {
    await this.api.ok('DELETE', '/api/v1/orders', 'orderCancelAll', { symbol: PERP_SYMBOL });
    this.open = [];
  }

  async quote(cents: number, lots: number): Promise<void> {
    const step = Math.max(1, Math.floor((cents * QUOTE_STEP_BPS) / 10_000));
    const levels = Array.from({ length: QUOTE_LEVELS }, (_, i) => (i + 1) * step);
    const posted: string[] = [];
    for (const away of levels) if (cents - away > 0) posted.push(await this.post('Bid', cents - away, lots));
    for (const orderId of this.open) {
      await this.api.signed('DELETE', '/api/v1/order', 'orderCancel', { symbol: PERP_SYMBOL, orderId });
    }
    for (const away of levels) posted.push(await this.post('Ask', cents + away, lots));
    this.open = posted;
  }

  private async post(side: 'Bid' | 'Ask', cents: number, lots: number): Promise<string> {
    const order = await this.api.ok('POST', '/api/v1/order', 'orderExecute', {
      symbol: PERP_SYMBOL, side, orderType: 'Limit', price: hundredths(cents), quantity: hundredths(lots), postOnly: true,
    });
    return String(order.id);
  }
}

/** The account's position in the perpetual in lots (signed; 0 without one) and its figures. */
async function position(small: ApiClient): Promise<{ lots: number; figures: Record<string, string> | null }> {
  const answer = await small.signed('GET', '/api/v1/position', 'positionQuery', { symbol: PERP_SYMBOL });
  if (answer.status === 404) return { lots: 0, figures: null };
  if (answer.status !== 200) throw new ApiError(`GET /api/v1/position answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  const figures = (answer.body as Array<Record<string, string>>)[0];
  return { lots: figures ? toHundredths(figures.netQuantity) : 0, figures: figures ?? null };
}

async function liquidating(small: ApiClient): Promise<boolean> {
  return (await small.ok('GET', '/api/v1/account', 'accountQuery')).liquidating === true;
}

/** Subscribes the streams and waits until the maker's first quotes show on the depth stream. */
async function openStreams(o: LiquidationDemoOptions, watch: Watch, actors: Actors, startCents: number, lots: number): Promise<void> {
  watch.connection = await StreamConnection.connect(o.host, o.port, (m) => watch.receive(m));
  watch.connection.subscribe(['account.orderUpdate', 'account.positionUpdate'], actors.small.subscribeSignature());
  watch.connection.subscribe(['liquidation', `depth.${PERP_SYMBOL}`]);
  o.print(`streams         subscribed: account.orderUpdate, account.positionUpdate (account ${actors.smallAccount.accountId}), liquidation`);
  await actors.maker.cancelAll();
  await actors.maker.quote(startCents, lots);
  o.print(`maker           quotes ${PERP_SYMBOL} around ${hundredths(startCents)}: ${QUOTE_LEVELS} bids and asks of ${hundredths(lots)}`);
  await watch.until((m) => m.stream === `depth.${PERP_SYMBOL}`, 'depth message after the maker\'s quotes', 30_000);
}

/** The small account's leveraged long, at market; waits for its fill on the account stream. */
async function openLong(o: LiquidationDemoOptions, watch: Watch, actors: Actors, lots: number): Promise<Record<string, string>> {
  await actors.small.ok('PATCH', '/api/v1/account', 'accountUpdate', { leverageLimit: String(o.leverage + 1) });
  const order = await actors.small.ok('POST', '/api/v1/order', 'orderExecute', {
    symbol: PERP_SYMBOL, side: 'Bid', orderType: 'Market', quantity: hundredths(lots),
  });
  o.print(`order           market Bid ${hundredths(lots)} ${PERP_SYMBOL}: ${order.status}, executed ${order.executedQuantity}`);
  await watch.until((m) => m.stream === 'account.positionUpdate', 'position update after the opening order', 30_000);
  const opened = await position(actors.small);
  if (opened.figures === null || opened.lots <= 0) throw new ApiError(`the opening order left no long position (${JSON.stringify(order)})`);
  const f = opened.figures;
  o.print(`position        ${f.netQuantity} at entry ${f.entryPrice}, mark ${f.markPrice}, estimated liquidation price ${f.estLiquidationPrice}`);
  return f;
}

interface DropResult {
  steps: number;
  lowestCents: number;
  finalLots: number;
}

/** Step 4: moves the index down while the account is healthy, waits while it is liquidating. */
async function drop(o: LiquidationDemoOptions, watch: Watch, actors: Actors, startCents: number, lots: number): Promise<DropResult> {
  const stepCents = Math.max(1, Math.floor((startCents * o.stepBps) / 10_000));
  let cents = startCents;
  let steps = 0;
  let lastSet = Date.now();
  let wasLiquidating = false;
  for (;;) {
    // The flag first: a position read after it has every fill of the step that cleared it.
    const now = await liquidating(actors.small);
    const held = await position(actors.small);
    if (held.lots === 0) {
      o.print('position        closed');
      return { steps, lowestCents: cents, finalLots: 0 };
    }
    if (now !== wasLiquidating) {
      o.print(`account         liquidating: ${now} (GET /api/v1/account), position ${held.figures!.netQuantity}, mark ${held.figures!.markPrice}`);
      wasLiquidating = now;
    }
    if (now) {
      if (Date.now() - lastSet >= INDEX_REFRESH_MS) {
        await setIndex(o, cents);
        lastSet = Date.now();
      }
      await watch.next(MESSAGE_WAIT_MS);
      continue;
    }
    if (steps >= o.maxSteps || cents - stepCents <= 0) return { steps, lowestCents: cents, finalLots: held.lots };
    cents -= stepCents;
    steps++;
    await setIndex(o, cents);
    lastSet = Date.now();
    const f = (await position(actors.small)).figures;
    o.print(`index           step ${steps}: ${ASSET}=${hundredths(cents)}` + (f ? `, mark ${f.markPrice}, uPnL ${f.pnlUnrealized}` : ''));
    await actors.maker.quote(cents, lots);
  }
}

async function fillsHistory(small: ApiClient, expected: number): Promise<Array<Record<string, unknown>>> {
  const deadline = Date.now() + HISTORY_WAIT_MS;
  for (;;) {
    const all: Array<Record<string, unknown>> = [];
    for (const fillType of LIQUIDATION_FILL_TYPES) {
      const fills = await small.ok('GET', '/wapi/v1/history/fills', 'fillHistoryQueryAll', { symbol: PERP_SYMBOL, fillType, sortDirection: 'Asc' });
      for (const f of fills as Array<Record<string, unknown>>) all.push({ fillType, ...f });
    }
    if (all.length >= expected || Date.now() > deadline) return all.sort((a, b) => Number(a.tradeId) - Number(b.tradeId));
    await sleep(200);
  }
}

/** Step 5: the account's liquidation fills and system orders as the histories list them. */
async function report(o: LiquidationDemoOptions, watch: Watch, small: ApiClient): Promise<{ fills: Array<Record<string, unknown>>; systemOrders: Array<Record<string, unknown>> }> {
  const fills = await fillsHistory(small, watch.liquidationFills().length);
  for (const f of fills) {
    o.print(`fill            ${f.fillType}: ${f.side} ${f.quantity} at ${f.price}, fee ${f.fee} ${f.feeSymbol}, systemOrderType ${f.systemOrderType}`);
  }
  const orders = await small.ok('GET', '/wapi/v1/history/orders', 'orderHistoryQueryAll', { symbol: PERP_SYMBOL, sortDirection: 'Asc' }) as Array<Record<string, unknown>>;
  const systemOrders = orders.filter((order) => order.systemOrderType !== null);
  for (const order of systemOrders) {
    o.print(`system order    ${order.systemOrderType}: ${order.orderType} ${order.timeInForce} ${order.side} ${order.quantity}, executed ${order.executedQuantity}, ${order.status}`);
  }
  return { fills, systemOrders };
}

function usdcLine(lines: InsuranceLineJson[]): InsuranceLineJson | null {
  return lines.find((line) => line.symbol === 'USDC') ?? null;
}

export async function liquidationDemo(o: LiquidationDemoOptions): Promise<Record<string, unknown>> {
  const base = `http://${o.host.includes(':') ? `[${o.host}]` : o.host}:${o.port}`;
  const actors = await createActors(o, base);
  const startCents = await startingPrice(o);
  const lots = Math.floor((o.deposit * o.leverage * 10_000) / startCents);
  if (lots < 1) throw new ApiError(`a position of ${o.leverage} × ${o.deposit} USDC is less than one lot at ${hundredths(startCents)}`);
  const insuranceBefore = usdcLine((await getInsurance(o.adminPort)).insurance);
  o.print(`insurance       USDC before: ${JSON.stringify(insuranceBefore)}`);
  const watch = new Watch(o.print);
  try {
    await setIndex(o, startCents);
    await openStreams(o, watch, actors, startCents, lots);
    const opened = await openLong(o, watch, actors, lots);
    const result = await drop(o, watch, actors, startCents, lots);
    const { fills, systemOrders } = await report(o, watch, actors.small);
    const insuranceAfter = usdcLine((await getInsurance(o.adminPort)).insurance);
    o.print(`insurance       USDC after: ${JSON.stringify(insuranceAfter)}`);
    const liquidationMessages = watch.messages.filter((m) => m.stream === 'liquidation').map((m) => m.data);
    if (fills.length === 0) throw new ApiError(`no liquidation fill of account ${actors.smallAccount.accountId} after ${result.steps} index moves down to ${hundredths(result.lowestCents)}`);
    return {
      account: actors.smallAccount,
      makerAccountId: actors.makerAccountId,
      symbol: PERP_SYMBOL,
      startIndex: hundredths(startCents),
      lowestIndex: hundredths(result.lowestCents),
      indexSteps: result.steps,
      openedQuantity: opened.netQuantity,
      finalQuantity: hundredths(result.finalLots),
      liquidationFills: fills.map((f) => ({
        fillType: f.fillType, tradeId: f.tradeId, orderId: f.orderId, side: f.side, price: f.price, quantity: f.quantity, fee: f.fee, systemOrderType: f.systemOrderType,
      })),
      systemOrders: systemOrders.map((order) => ({
        id: order.id, systemOrderType: order.systemOrderType, orderType: order.orderType, timeInForce: order.timeInForce, side: order.side,
        quantity: order.quantity, executedQuantity: order.executedQuantity, status: order.status,
      })),
      liquidationMessages,
      insurance: { before: insuranceBefore, after: insuranceAfter },
    };
  } finally {
    watch.connection?.close();
    await restore(o, actors.maker, startCents);
  }
}

/**
 * The maker's quotes cancelled and SOL's index set back, whatever happened before; a failure here
 * is printed, so that it does not hide the one that ended the run.
 */
async function restore(o: LiquidationDemoOptions, maker: Maker, startCents: number): Promise<void> {
  try {
    await maker.cancelAll();
  } catch (error) {
    o.print(`maker           could not cancel its quotes: ${(error as Error).message}`);
  }
  try {
    await setIndex(o, startCents);
    o.print(`index           ${ASSET} set back to ${hundredths(startCents)}`);
  } catch (error) {
    o.print(`index           could not set ${ASSET} back to ${hundredths(startCents)}: ${(error as Error).message}`);
  }
}
