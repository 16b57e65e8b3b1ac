// The liquidation waterfall (engine/core/liquidation/), asserted by value on the margin test
// configuration (USDC: weight 1, MMF 0.05; SOL: weight 0.5, MMF 0.1; SOL_USDC banded ±25 %): an
// account pushed over the line by one index price is cancelled at once, then on engine time
// repaid, unwound on the book in chunks of at most 10 % of its borrow with the 1 % fee going to
// the insurance fund, and ends healthy; a bankrupt account's debt is covered by the fund; a fund
// too small socializes the rest to the pool's lenders pro rata. The harness checks the invariants
// and exact conservation (deposits, withdrawals and the operator's fund payments) after every
// command; a replay and a snapshot round trip reproduce the state.

import { describe, expect, it } from 'vitest';
import {
  BorrowLendSource, CommandKind, ExpiryReason, OrderEvent, OrderStatus, RecordType, ResultCode, SystemOrderType,
  type BorrowLendRec, type InsuranceRec, type OrderRec, type SocializedLossRec,
} from '../../../engine/bus/types.js';
import { BASE, EngineHarness, QUOTE, cmd, replay, resultOf, tradesOf, type Rec } from '../../helpers/engine-harness.js';
import { borrow, lend, marginConfig } from '../../helpers/margin-harness.js';
import { PERP, perpConfig } from '../../helpers/perp-harness.js';

const SECOND_US = 1_000_000;
/** SOL's index at `usdcPerUnit` USDC units per SOL unit (10^-9 SOL): ×10^12 in priceE9. */
const solIndex = (usdcPerUnit: number) => cmd.setIndexPrice(BASE, usdcPerUnit * 1_000_000_000_000);

const ordersIn = (records: Rec[]) => records.filter((r): r is OrderRec & { type: RecordType.Order } => r.type === RecordType.Order);
const insuranceIn = (records: Rec[]) => records.filter((r): r is InsuranceRec & { type: RecordType.Insurance } => r.type === RecordType.Insurance);
const lossesIn = (records: Rec[]) => records.filter((r): r is SocializedLossRec & { type: RecordType.SocializedLoss } => r.type === RecordType.SocializedLoss);
const movesIn = (records: Rec[]) => records.filter((r): r is BorrowLendRec & { type: RecordType.BorrowLend } => r.type === RecordType.BorrowLend);

function liquidating(h: EngineHarness, accountId: number): boolean {
  const rec = h.apply(cmd.queryAccountSettings(accountId)).find((r) => r.type === RecordType.AccountSettings);
  return rec?.type === RecordType.AccountSettings && (rec.settings & 16) !== 0;
}

function position(h: EngineHarness, accountId: number, assetId: number): [number, number] {
  const row = movesIn(h.apply({ kind: CommandKind.QueryBorrowLendPositions, accountId })).find((r) => r.assetId === assetId);
  return row === undefined ? [0, 0] : [row.lentUnits, row.borrowedUnits];
}

function fund(h: EngineHarness, assetId: number): InsuranceRec {
  const row = insuranceIn(h.apply({ kind: CommandKind.QueryInsurance })).find((r) => r.assetId === assetId);
  if (row === undefined) throw new Error(`no insurance line of asset ${assetId}`);
  return row;
}

/**
 * A lender of 10^9 USDC; SOL traded once at 200 ticks (60 USDC units per SOL unit) and indexed
 * there; a borrower at 10× leverage holding 10 000 SOL units (600 000 USDC units, 300 000 after
 * its haircut) that borrows 250 000 USDC and withdraws 240 000 of them; a market maker whose bids
 * wait at `bidTicks` for up to 1 000 lots. Unbanded, SOL_USDC takes bids far below its last trade
 * and SOL has no book mark (its index stays the mark).
 */
function setup(bidTicks: number, lent = 1_000_000_000, banded = true): { h: EngineHarness; borrower: number; lender: number; maker: number } {
  const config = marginConfig();
  if (!banded) config.markets = config.markets.map(({ maxMultiplierBps: _max, minMultiplierBps: _min, ...market }) => market);
  const h = new EngineHarness(config);
  const [lender] = h.fundedAccounts(1, { [QUOTE]: 1_000_000_000 });
  h.apply(lend(lender, QUOTE, lent));
  const [seller, maker] = [h.createAccount(100), h.createAccount(101)];
  h.apply(cmd.deposit(seller, BASE, 1_000));
  h.apply(cmd.deposit(maker, QUOTE, 10_000_000));
  h.apply(cmd.place(seller, 'ask', 200, 5, { postOnly: true }));
  expect(tradesOf(h.apply(cmd.place(maker, 'bid', 200, 5))).length).toBe(1);
  h.apply(solIndex(60));
  const borrower = h.createAccount(50);
  h.apply(cmd.updateAccountSettings(borrower, { leverageLimitHundredths: 1_000 }));
  h.apply(cmd.deposit(borrower, BASE, 10_000));
  expect(resultOf(h.apply(borrow(borrower, QUOTE, 250_000))).code).toBe(ResultCode.Ok);
  expect(resultOf(h.apply({ kind: CommandKind.Withdraw, accountId: borrower, assetId: QUOTE, amountUnits: 240_000, key: new Uint8Array(32) })).code).toBe(ResultCode.Ok);
  if (bidTicks > 0) h.apply(cmd.place(maker, 'bid', bidTicks, 1_000, { postOnly: true }));
  return { h, borrower, lender, maker };
}

/** Ticks of one second of engine time until the account leaves the state (at most `steps`); the records of each step. */
function runSteps(h: EngineHarness, accountId: number, steps: number): Rec[][] {
  const out: Rec[][] = [];
  for (let i = 0; i < steps && liquidating(h, accountId); i++) out.push(h.apply(cmd.tick(), h.timeUs + SECOND_US));
  return out;
}

describe('liquidation waterfall: trigger, repay, unwind on the book', () => {
  it('cancels the account at the price that pushes it over the line, unwinds in chunks with fees to the fund, and ends healthy', () => {
    const { h, borrower } = setup(153);
    const resting = h.apply(cmd.place(borrower, 'ask', 240, 100, { postOnly: true }));
    expect(ordersIn(resting).at(-1)?.status).toBe(OrderStatus.New);
    // 46 USDC units per SOL unit: collateral 230 000 + 10 000 USDC against 250 000 borrowed.
    const pushed = h.apply(solIndex(46));
    expect(liquidating(h, borrower)).toBe(true);
    const cancelled = ordersIn(pushed).filter((r) => r.accountId === borrower && r.event === OrderEvent.Cancelled);
    expect(cancelled.map((r) => r.expiryReason)).toEqual([ExpiryReason.Liquidation]);
    expect(h.balance(borrower, BASE)).toEqual([10_000, 0]);
    // Nothing else happens before a step is due.
    expect(ordersIn(h.apply(cmd.tick(), h.timeUs + SECOND_US - 1)).length).toBe(0);

    const steps = runSteps(h, borrower, 20);
    expect(liquidating(h, borrower)).toBe(false);
    expect(steps.length).toBeGreaterThan(1);
    const all = steps.flat();
    // The first step repays the 10 000 USDC the account held, before anything is sold.
    const repays = movesIn(all).filter((r) => r.accountId === borrower && r.source === BorrowLendSource.Liquidation);
    expect(repays[0].quantityUnits).toBe(10_000);
    // Each step's system order sells at most 10 % of the borrow's worth (plus the slack) of SOL.
    const system = ordersIn(all).filter((r) => r.systemOrderType === SystemOrderType.LiquidatePositionOnBook);
    const accepted = system.filter((r) => r.event === OrderEvent.Accepted);
    expect(accepted.length).toBe(steps.length);
    for (const order of accepted) {
      expect(order.accountId).toBe(borrower);
      expect(order.qtyLots).toBeLessThanOrEqual(Math.ceil((24_000 * 1.05) / 460));
    }
    // The fee: 1 % of what each fill paid the account, into the fund's USDC line.
    const fills = system.filter((r) => r.event === OrderEvent.Fill);
    const fees = fills.reduce((sum, r) => sum + r.feeUnits, 0);
    expect(fills.every((r) => r.feeUnits === Math.floor((r.lastFillQtyLots * r.lastFillPriceTicks * 3) / 100))).toBe(true);
    expect(fees).toBeGreaterThan(0);
    expect(fund(h, QUOTE)).toMatchObject({ fundUnits: fees, feesUnits: fees, coveredUnits: 0, socializedUnits: 0 });
    // The borrow shrank by what the sales paid, and the account keeps the rest of its SOL.
    const sold = fills.reduce((sum, r) => sum + r.lastFillQtyLots, 0);
    expect(h.balance(borrower, BASE)).toEqual([10_000 - sold * 10, 0]);
    const proceeds = fills.reduce((sum, r) => sum + r.lastFillQtyLots * r.lastFillPriceTicks * 3, 0);
    expect(position(h, borrower, QUOTE)).toEqual([0, 240_000 - (proceeds - fees)]);
    // The step timer stops once nobody is liquidating.
    expect(h.exchange.nextWakeUs()).toBeGreaterThan(h.timeUs + 1_000 * SECOND_US);
    const copy = replay(h.config, h.stream);
    expect(copy.exchange.stateHash()).toBe(h.exchange.stateHash());
    h.restartFromSnapshot();
  });

  it('keeps stepping through a snapshot round trip mid-liquidation', () => {
    const { h, borrower } = setup(153);
    h.apply(solIndex(46));
    runSteps(h, borrower, 1);
    expect(liquidating(h, borrower)).toBe(true);
    h.restartFromSnapshot();
    runSteps(h, borrower, 20);
    expect(liquidating(h, borrower)).toBe(false);
    expect(replay(h.config, h.stream).exchange.stateHash()).toBe(h.exchange.stateHash());
  });

  it('waits while the book has no bid and unwinds when one arrives', () => {
    const { h, borrower, maker } = setup(0);
    h.apply(solIndex(46));
    const idle = runSteps(h, borrower, 3);
    expect(idle.length).toBe(3);
    expect(liquidating(h, borrower)).toBe(true);
    // The orders expired unfilled (no liquidity), and nothing was socialized.
    expect(ordersIn(idle.flat()).filter((r) => r.event === OrderEvent.Expired).every((r) => r.expiryReason === ExpiryReason.InsufficientLiquidity)).toBe(true);
    h.apply(cmd.place(maker, 'bid', 153, 1_000, { postOnly: true }));
    runSteps(h, borrower, 20);
    expect(liquidating(h, borrower)).toBe(false);
  });
});

describe('liquidation trigger: a borrower exposed through a perpetual', () => {
  it('re-checks a borrower whose only exposure to the priced asset is a perpetual position', () => {
    const h = new EngineHarness(perpConfig());
    const [lender] = h.fundedAccounts(1, { [QUOTE]: 1_000_000_000 });
    h.apply(lend(lender, QUOTE, 1_000_000_000));
    h.apply(solIndex(60));
    const maker = h.createAccount(101);
    h.apply(cmd.deposit(maker, QUOTE, 10_000_000));
    h.apply(cmd.updateAccountSettings(maker, { leverageLimitHundredths: 1_000 }));
    h.apply(cmd.place(maker, 'ask', 200, 100, { market: PERP, postOnly: true }));
    // Holds and borrows only USDC; long 1 000 SOL units through the perpetual at 60 USDC units each.
    const borrower = h.createAccount(50);
    h.apply(cmd.updateAccountSettings(borrower, { leverageLimitHundredths: 1_000 }));
    h.apply(cmd.deposit(borrower, QUOTE, 20_000));
    expect(resultOf(h.apply(borrow(borrower, QUOTE, 10_000))).code).toBe(ResultCode.Ok);
    expect(tradesOf(h.apply(cmd.place(borrower, 'bid', 200, 100, { market: PERP }))).length).toBe(1);
    expect(liquidating(h, borrower)).toBe(false);
    // SOL at 40: the position loses 20 000 USDC units, net equity 0 ≤ Σ N·MMF.
    h.apply(solIndex(40));
    expect(liquidating(h, borrower)).toBe(true);
    // The first step repays the USDC borrow from the USDC it holds; the book has no bid for the
    // position, so it is closed against the maker's short by auto-deleveraging and the account leaves the state.
    const step = runSteps(h, borrower, 1).flat();
    expect(position(h, borrower, QUOTE)).toEqual([0, 0]);
    expect(ordersIn(step).filter((r) => r.event === OrderEvent.Fill && r.systemOrderType === SystemOrderType.LiquidatePositionOnAdl).map((r) => r.accountId)).toEqual([maker, borrower]);
    expect(liquidating(h, borrower)).toBe(false);
  });
});

describe('liquidation waterfall: bankruptcy', () => {
  /** SOL's index collapses and the borrower's SOL is sold near it: it still owes USDC and holds nothing. */
  function bankrupt(h: EngineHarness, borrower: number): Rec[] {
    // 10 USDC units per SOL unit: collateral 50 000 + 10 000 USDC against 250 000 borrowed.
    h.apply(solIndex(10));
    return runSteps(h, borrower, 200).flat();
  }

  it('covers a bankrupt borrow from the insurance fund, so lenders are whole', () => {
    const { h, borrower, lender } = setup(34, 1_000_000_000, false);
    expect(resultOf(h.apply({ kind: CommandKind.DepositInsurance, assetId: QUOTE, amountUnits: 1_000_000 })).value).toBe(1_000_000);
    const records = bankrupt(h, borrower);
    expect(liquidating(h, borrower)).toBe(false);
    expect(position(h, borrower, QUOTE)).toEqual([0, 0]);
    expect(lossesIn(records)).toEqual([]);
    expect(position(h, lender, QUOTE)[0]).toBe(1_000_000_000);
    // The fund: the payment and the fees in, the covered debt out (the account's leftovers are SOL dust, if any).
    const line = fund(h, QUOTE);
    const repaidBySales = movesIn(records).filter((r) => r.accountId === borrower && r.source === BorrowLendSource.Liquidation && r.quantityUnits !== line.coveredUnits)
      .reduce((sum, r) => sum + r.quantityUnits, 0);
    expect(line.coveredUnits).toBe(250_000 - repaidBySales);
    expect(line.coveredUnits).toBeGreaterThan(0);
    expect(line).toMatchObject({ fundUnits: 1_000_000 + line.feesUnits - line.coveredUnits, depositedUnits: 1_000_000, socializedUnits: 0 });
    h.restartFromSnapshot();
  });

  it('socializes what a too small fund cannot cover to the lenders, pro rata', () => {
    const { h, borrower, lender } = setup(34, 600_000_000, false);
    const second = h.createAccount(60);
    h.apply(cmd.deposit(second, QUOTE, 200_000_000));
    h.apply(lend(second, QUOTE, 200_000_000));
    const records = bankrupt(h, borrower);
    expect(liquidating(h, borrower)).toBe(false);
    expect(position(h, borrower, QUOTE)).toEqual([0, 0]);
    const line = fund(h, QUOTE);
    const losses = lossesIn(records);
    const lost = losses.reduce((sum, r) => sum + r.units, 0);
    expect(lost).toBe(line.socializedUnits);
    expect(lost).toBeGreaterThan(0);
    // Pro rata: the first lender lends three times what the second does.
    const [first, other] = [losses.find((r) => r.accountId === lender)!, losses.find((r) => r.accountId === second)!];
    expect(Math.abs(first.units - 3 * other.units)).toBeLessThanOrEqual(3);
    expect(position(h, lender, QUOTE)[0]).toBe(600_000_000 - first.units);
    expect(position(h, second, QUOTE)[0]).toBe(200_000_000 - other.units);
    expect(losses.every((r) => r.bankruptAccountId === borrower)).toBe(true);
    expect(replay(h.config, h.stream).exchange.stateHash()).toBe(h.exchange.stateHash());
  });

  it('refuses a fund payment with an account, of an unknown asset or of no amount, changing nothing', () => {
    const h = new EngineHarness(marginConfig());
    const hash = h.exchange.stateHash();
    expect(resultOf(h.apply({ kind: CommandKind.DepositInsurance, accountId: 1, assetId: QUOTE, amountUnits: 5 })).code).toBe(ResultCode.InvalidCommand);
    expect(resultOf(h.apply({ kind: CommandKind.DepositInsurance, assetId: 9, amountUnits: 5 })).code).toBe(ResultCode.UnknownAsset);
    expect(resultOf(h.apply({ kind: CommandKind.DepositInsurance, assetId: QUOTE, amountUnits: 0 })).code).toBe(ResultCode.AmountOutOfRange);
    expect(h.exchange.stateHash()).toBe(hash);
    expect(resultOf(h.apply({ kind: CommandKind.DepositInsurance, assetId: BASE, amountUnits: 7 })).code).toBe(ResultCode.Ok);
    expect(fund(h, BASE)).toMatchObject({ fundUnits: 7, depositedUnits: 7 });
  });
});
