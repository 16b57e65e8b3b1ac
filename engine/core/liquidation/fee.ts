// The liquidation fee (venue mechanics §4.5): feeBps of what each fill of a liquidation order
// (unwind.ts, OrderFlag.Liquidation) pays the liquidated account, after its trading fee, goes to
// the insurance fund of that asset (fund.ts). floor(received × feeBps / 10000), as trading fees
// round; the fill's record reports the trading and the liquidation fee together as its fee.
//
// A perpetual fill of such an order (perp-unwind.ts) pays feeBps of its notional, rounded down,
// from the account's available USDC after the fill's settlement and debts (perp/settle.ts), as
// far as that USDC goes: the part it cannot pay is not charged (the fund never takes a unit the
// account does not hold). A backstop fill (backstop.ts: OrderFlag.Adl without Liquidation) pays
// the same liquidation fee on the liquidated account's half (the taker's) and no trading fee; the
// provider's half pays neither. An auto-deleveraging fill (adl.ts) pays neither fee. A collateral
// conversion's spot fill (conversion.ts: Liquidation and Adl, on a spot market) pays no liquidation fee.

import { OrderFlag } from '../../bus/types.js';
import type { EngineState } from '../state.js';
import { feeUnits, type AmountUnits } from '../units.js';
import { Of } from '../book/orders.js';

/** The perpetual fill's liquidation fee of the order in `slot`, the fill's taker or not (header); the units taken (0 for a client order). */
export function takePerpLiquidationFee(s: EngineState, slot: number, isTaker: boolean, quoteIndex: number, notionalUnits: AmountUnits): AmountUnits {
  const system = s.pool.u8[slot << Of.w8 | Of.flags] & (OrderFlag.Liquidation | OrderFlag.Adl);
  if (system !== OrderFlag.Liquidation && !(system === OrderFlag.Adl && isTaker)) return 0 as AmountUnits;
  const accountId = s.pool.u32[slot << Of.w32 | Of.accountId];
  const fee = Math.min(feeUnits(notionalUnits, s.insurance.config.feeBps), s.ledger.availableUnits(accountId, quoteIndex)) as AmountUnits;
  if (fee <= 0) return 0 as AmountUnits;
  s.ledger.toFund(accountId, quoteIndex, fee);
  s.insurance.takeFee(quoteIndex, fee);
  return fee;
}

/** Takes the fee from `receivedUnits` just credited to the order's account; the units taken (0 for a client order). */
export function takeLiquidationFee(s: EngineState, slot: number, assetIndex: number, receivedUnits: AmountUnits): AmountUnits {
  // A spot order with Liquidation | Adl is a collateral conversion (conversion.ts): no liquidation fee.
  if ((s.pool.u8[slot << Of.w8 | Of.flags] & (OrderFlag.Liquidation | OrderFlag.Adl)) !== OrderFlag.Liquidation) return 0 as AmountUnits;
  const fee = feeUnits(receivedUnits, s.insurance.config.feeBps);
  if (fee === 0) return fee;
  s.ledger.toFund(s.pool.u32[slot << Of.w32 | Of.accountId], assetIndex, fee);
  s.insurance.takeFee(assetIndex, fee);
  return fee;
}
