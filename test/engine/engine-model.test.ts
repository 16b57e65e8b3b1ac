// Differential test: the engine core against a deliberately naive reference model
// (test/helpers/engine-model.ts) fed the same seeded random stream, invalid commands included.
// Every record of every command must be identical, field for field and in the same order (the
// model writes each order event apart from its answer; test/helpers/events-in-answers.ts rewrites
// that into the engine's outputs, and one seed also runs both with the events apart, and one with
// a taker's balances and fills after each of its fills, as journals of earlier formats recorded them); the
// stream's queries (balances, open orders, snapshots) make the final states comparable too. The
// engine side restarts from snapshot round trips mid-stream, so its records after each restart are
// compared too. The model answers every command kind the stream sends (withdrawals, their
// confirmations, dust conversions and the Snapshot command included); a kind it did not answer
// (modelKinds probes it) would be left out of the stream, and the test names would say which. The fixed seeds run every time, plus one fresh seed per run
// named in its test; ENGINE_SEED=<n> reruns one seed, ENGINE_STEPS=<n> changes the length. The
// floors on how much a stream exercised (trades, positions, accepted kinds) hold on the fixed
// seeds; a fresh seed prints its counts, since a random draw may fall below any floor.
// Spot margin is compared on real funding: each fixed seed places orders that borrow their
// shortfall (autoBorrow) and are accepted, and fills whose proceeds repay or are lent.
// Perpetuals too: each seed trades the perpetual and reads its positions, the model's position
// sizes sum to 0 per perpetual after every command (the engine's invariant checker checks its own),
// and over the fixed seeds positions realize PnL, hold unsettled amounts and orders are refused
// for margin, and refused and stopped at the position limit; the perpetual's mark is sampled off
// its index (EWMA), interval ends publish their funding rate and open positions pay and receive
// funding; accounts left owing USDC on a position sell collateral (collateral conversion) in both.
// The perpetual liquidation round names a backstop liquidity provider: over the fixed seeds it
// takes positions, whole or in part (the rest auto-deleveraged).
import { describe, expect, it } from 'vitest';
import { EngineHarness, type Rec, stateOf } from '../helpers/engine-harness.js';
import { ModelExchange } from '../helpers/engine-model.js';
import { withEventsInAnswers } from '../helpers/events-in-answers.js';
import { M2, OPTIONAL_KINDS, modelKinds, randomConfig, runRandomStream, seedLabel, seedsForRun } from '../helpers/engine-random.js';
import { BorrowLendEvent, CommandFlag, CommandKind, ExpiryReason, FRONT_ID_NONE, MarkPriceSource, OrderEvent, PositionEvent, RecordType, ResultCode, SystemOrderType, type ResultRec } from '../../engine/bus/types.js';

const FILE = 'test/engine/engine-model.test.ts';
const FIXED_SEEDS = [21, 22, 23, 24, 25, 26, 28];
const SEEDS = seedsForRun(FIXED_SEEDS);
/** The sums over the fixed seeds are checked when every fixed seed ran (not under ENGINE_SEED). */
const overFixedSeeds = SEEDS.filter((run) => !run.fresh).length === FIXED_SEEDS.length ? it : it.skip;
const STEPS = Number(process.env.ENGINE_STEPS ?? 1200);
const left = OPTIONAL_KINDS.filter((kind) => !modelKinds(randomConfig(1)).includes(kind)).map((kind) => CommandKind[kind]);
const leftOut = left.length > 0 ? ` (left out, the model lacks them: ${left.join(', ')})` : '';

/** The Ok results the engine gave to commands of `kind`. */
function okResults(h: EngineHarness, kind: CommandKind): ResultRec[] {
  const requests = new Set(h.stream.filter((s) => s.command.kind === kind).map((s) => s.command.requestId));
  return h.log.flatMap((r) => (r.type === RecordType.Result && r.code === ResultCode.Ok && requests.has(r.requestId) ? [r] : []));
}

describe('engine core against the reference model', () => {
  // Spot margin over the fixed seeds (each seed's share depends on its draws).
  const spotMargin = { borrowingOrders: 0, autoMoves: 0 };
  // The backstop over the fixed seeds: fills to a provider, and rounds whose rest went to ADL after it.
  const backstop = { fills: 0, thenAdl: 0 };
  // Perpetuals over the fixed seeds.
  const perp = { realized: 0, unsettled: 0, refused: 0, ewmaSamples: 0, fundingRates: 0, paid: 0, received: 0, withFunding: 0, events: [0, 0, 0, 0], realizedAtMark: 0, conversionFills: 0, positionLimited: 0, positionLimitRefused: 0 };
  it('seed 21 with every event apart from its answer and the taker\'s balances and fills after each fill (as journals of format 4 and before recorded): identical records for every command', () => {
    const seed = 21;
    const config = randomConfig(seed);
    const h = new EngineHarness(config);
    h.eventsInAnswers = false;
    h.takerSummary = false;
    runRandomStream(h, seed, STEPS, { kinds: modelKinds(config) });
    expect(h.snapshotRestarts).toBeGreaterThan(0);
    const model = new ModelExchange(config);
    model.eventsInAnswers = false;
    model.takerSummary = false;
    let index = 0;
    let carried = 0;
    for (const stamped of h.stream) {
      const expected = model.apply(stamped.command, stamped.seq, stamped.timeUs);
      expect(h.log.slice(index, index + expected.length), `seq ${stamped.seq}`).toEqual(expected);
      carried += expected.length - withEventsInAnswers(expected).length;
      index += expected.length;
    }
    expect(index).toBe(h.log.length);
    // The stream has events that format 5 carries in answers: the two ways differ on it.
    expect(carried).toBeGreaterThan(STEPS / 10);
  });

  it('seed 22 with the taker\'s balances after each of its fills and every fill a record of its own (as journals of format 5 recorded): identical records for every command', () => {
    const seed = 22;
    const config = randomConfig(seed);
    const h = new EngineHarness(config);
    h.takerSummary = false;
    runRandomStream(h, seed, STEPS, { kinds: modelKinds(config) });
    expect(h.snapshotRestarts).toBeGreaterThan(0);
    const model = new ModelExchange(config);
    model.takerSummary = false;
    // The same stream through a model of the engine's default: a taker's match in one summary.
    const once = new ModelExchange(config);
    let index = 0;
    let fewer = 0;
    let carried = 0;
    for (const stamped of h.stream) {
      const expected = model.apply(stamped.command, stamped.seq, stamped.timeUs);
      expect(h.log.slice(index, index + expected.length), `seq ${stamped.seq}`).toEqual(expected);
      const summarized = once.apply(stamped.command, stamped.seq, stamped.timeUs);
      fewer += expected.length - summarized.length;
      carried += summarized.filter((r) => r.type === RecordType.Order && r.event === OrderEvent.Fill && r.frontId !== FRONT_ID_NONE).length;
      index += expected.length;
    }
    expect(index).toBe(h.log.length);
    // Takers that fill write fewer records in summary: answers carry their last fills, and takers
    // that fill more than once or release a lock write their balances once.
    expect(carried).toBeGreaterThan(0);
    expect(fewer).toBeGreaterThan(carried);
  });

  for (const run of SEEDS) {
    const { seed } = run;
    it(`${seedLabel(run, FILE)}: identical records for every command${leftOut}`, () => {
      const config = randomConfig(seed);
      const h = new EngineHarness(config);
      runRandomStream(h, seed, STEPS, { kinds: modelKinds(config) });
      expect(h.snapshotRestarts).toBeGreaterThan(0);
      const model = new ModelExchange(config);
      let index = 0;
      let borrowingOrders = 0;
      for (const stamped of h.stream) {
        const expected = model.apply(stamped.command, stamped.seq, stamped.timeUs);
        const { kind, flags, accountId } = stamped.command;
        const borrowed = expected.some((r) => r.type === RecordType.BorrowLend && r.event === BorrowLendEvent.Borrow && r.accountId === accountId && r.frontId === FRONT_ID_NONE);
        if (kind === CommandKind.PlaceOrder && (flags & CommandFlag.AutoBorrow) !== 0 && borrowed) borrowingOrders++;
        const actual: Rec[] = h.log.slice(index, index + expected.length);
        const context = `seed ${seed} (rerun: ENGINE_SEED=${seed} npx vitest run ${FILE}), seq ${stamped.seq}, command ${JSON.stringify({ ...stamped.command, key: undefined })}`;
        expect(actual, context).toEqual(expected);
        for (const [marketId, size] of model.perpSizes()) expect(size, `${context}: Σ positions of market ${marketId}`).toBe(0);
        index += expected.length;
      }
      expect(index).toBe(h.log.length);
      const autoMoves = h.log.filter((r) => r.type === RecordType.BorrowLend && r.frontId === FRONT_ID_NONE && (r.event === BorrowLendEvent.BorrowRepay || r.event === BorrowLendEvent.Lend));
      const positions = h.log.filter((r) => r.type === RecordType.Position);
      const trades = h.log.filter((r) => r.type === RecordType.Trade);
      const coverage = {
        trades: trades.length,
        bandedTrades: trades.filter((r) => r.marketId === 1).length,
        perpTrades: trades.filter((r) => r.marketId === M2).length,
        positions: positions.length,
        dustPayouts: okResults(h, CommandKind.ConvertDust).filter((r) => r.value > 0).length,
      };
      // A fresh seed's draws are its own: how much it exercised is printed, and the floors below
      // hold on the fixed seeds, where they cannot move from run to run.
      if (run.fresh) console.info(`engine against the model: ${seedLabel(run, FILE)} exercised ${JSON.stringify(coverage)}`);
      if (!run.fresh) {
        // The stream must exercise what it compares: both spot books trade (the banded one too,
        // so the model's band rules are compared on real fills), the perpetual trades and holds
        // positions, every optional kind the model answers is compared on accepted commands, and
        // dust conversions on real payouts.
        expect(coverage.trades, 'trades').toBeGreaterThan(STEPS / 20);
        expect(coverage.bandedTrades, 'trades on the banded market').toBeGreaterThan(STEPS / 100);
        expect(coverage.perpTrades, 'perpetual trades').toBeGreaterThan(STEPS / 200);
        expect(coverage.positions, 'position records').toBeGreaterThan(0);
        for (const kind of modelKinds(config)) expect(okResults(h, kind).length, `${CommandKind[kind]} accepted`).toBeGreaterThan(0);
        expect(coverage.dustPayouts, 'dust conversions that paid out').toBeGreaterThan(0);
        const system = h.log.filter((r) => r.type === RecordType.Order && r.event === OrderEvent.Fill);
        const backstopSeqs = new Set(system.filter((r) => r.type === RecordType.Order && r.systemOrderType === SystemOrderType.LiquidatePositionOnBackstop).map((r) => r.seq));
        backstop.fills += backstopSeqs.size;
        backstop.thenAdl += system.filter((r) => r.type === RecordType.Order && r.systemOrderType === SystemOrderType.LiquidatePositionOnAdl && backstopSeqs.has(r.seq)).length > 0 ? 1 : 0;
        spotMargin.borrowingOrders += borrowingOrders;
        spotMargin.autoMoves += autoMoves.length;
        perp.realized += positions.filter((r) => r.realizedHigh !== 0 || r.realizedLow !== 0).length;
        perp.unsettled += positions.filter((r) => r.unsettledHigh !== 0 || r.unsettledLow !== 0).length;
        const perpPlaces = new Set(h.stream.filter((s) => s.command.kind === CommandKind.PlaceOrder && s.command.marketId === M2).map((s) => s.command.requestId));
        perp.ewmaSamples += h.log.filter((r) => r.type === RecordType.MarkPrice && r.frontId === FRONT_ID_NONE && r.source === MarkPriceSource.Ewma).length;
        perp.withFunding += positions.filter((r) => r.cumulativeFundingUnits !== 0).length;
        perp.fundingRates += h.log.filter((r) => r.type === RecordType.FundingRate).length;
        perp.paid += h.log.filter((r) => r.type === RecordType.FundingPayment && r.quantityUnits < 0).length;
        perp.received += h.log.filter((r) => r.type === RecordType.FundingPayment && r.quantityUnits > 0).length;
        for (const r of positions) if (r.frontId === FRONT_ID_NONE) perp.events[r.event]++;
        perp.conversionFills += h.log.filter((r) => r.type === RecordType.Order && r.event === OrderEvent.Fill && r.systemOrderType === SystemOrderType.CollateralConversion).length;
        perp.refused += h.log.filter((r) => r.type === RecordType.Result && r.code === ResultCode.InsufficientMargin && perpPlaces.has(r.requestId)).length;
        // Where the open interest is not limited, a PositionLimit expiry is the accounts' position limit.
        if (config.positionLimitUnits !== undefined && seed % 2 === 0) {
          perp.positionLimited += h.log.filter((r) => r.type === RecordType.Order && r.expiryReason === ExpiryReason.PositionLimit).length;
        }
        perp.positionLimitRefused += h.log.filter((r) => r.type === RecordType.Result && r.code === ResultCode.PositionLimit).length;
        // Realization at mark moves a position's cost off its entry cost (perp/realize.ts).
        const p = stateOf(h.exchange).positions;
        for (let cell = 0; cell < p.lots.length; cell++) if (p.lots[cell] !== 0 && p.entryCost[cell] !== p.cost[cell]) perp.realizedAtMark++;
      }
    });
  }

  overFixedSeeds('over the fixed seeds, perpetual positions realize PnL, hold unsettled amounts, orders are refused for margin, and refused and stopped at the position limit', () => {
    expect(perp.realized, 'positions with realized PnL').toBeGreaterThan(0);
    expect(perp.unsettled, 'positions with an unsettled claim or debt').toBeGreaterThan(0);
    expect(perp.refused, 'perpetual orders refused for margin').toBeGreaterThan(0);
    expect(perp.realizedAtMark, 'positions realized at mark').toBeGreaterThan(0);
    expect(perp.positionLimited, 'orders stopped at the position limit').toBeGreaterThan(0);
    expect(perp.positionLimitRefused, 'orders refused for the position limit').toBeGreaterThan(0);
  });

  overFixedSeeds('over the fixed seeds, accounts left owing USDC on a position sell collateral (collateral conversion fills)', () => {
    expect(perp.conversionFills, 'collateral conversion fills').toBeGreaterThan(0);
  });

  overFixedSeeds('over the fixed seeds, the perpetual\'s mark is sampled off its index, funding rates are published, positions pay and receive funding and show it', () => {
    expect(perp.ewmaSamples, 'mark samples with an EWMA').toBeGreaterThan(0);
    expect(perp.fundingRates, 'funding rates').toBeGreaterThan(0);
    expect(perp.paid, 'funding payments paid').toBeGreaterThan(0);
    expect(perp.received, 'funding payments received').toBeGreaterThan(0);
    expect(perp.withFunding, 'positions showing their cumulative funding').toBeGreaterThan(0);
  });

  overFixedSeeds('over the fixed seeds, positions are opened, adjusted and closed by events, and no event lacks its cause', () => {
    expect(perp.events[PositionEvent.None], 'position events without a cause').toBe(0);
    expect(perp.events[PositionEvent.Opened], 'positions opened').toBeGreaterThan(0);
    expect(perp.events[PositionEvent.Adjusted], 'positions adjusted').toBeGreaterThan(0);
    expect(perp.events[PositionEvent.Closed], 'positions closed').toBeGreaterThan(0);
  });

  overFixedSeeds('over the fixed seeds, backstop providers take liquidated positions, and what one cannot take is auto-deleveraged', () => {
    expect(backstop.fills, 'steps with backstop fills').toBeGreaterThan(0);
    expect(backstop.thenAdl, 'steps with backstop fills and auto-deleveraging').toBeGreaterThan(0);
  });

  overFixedSeeds('over the fixed seeds, orders borrow their shortfall and fill proceeds are repaid or lent', () => {
    expect(spotMargin.borrowingOrders, 'orders that borrowed their shortfall').toBeGreaterThan(0);
    expect(spotMargin.autoMoves, 'fill proceeds repaid or lent').toBeGreaterThan(0);
  });
});
