// Balances: available and locked units per (account, asset), and each asset's supply.
//
// Two flat Float64Arrays indexed by accountId × assetCount + assetIndex. A Float64Array is used
// as an integer store: every value is a whole number ≤ 2^53 - 1 and is held exactly; no fraction
// ever enters. Locked units are exactly what the account's open and pending orders can still
// spend (checked by validateInvariants).
//
// Fees: units taken from fills go to a fee ledger per asset (`feeUnits`), owned by no account.
// Conservation therefore reads: for each asset, Σ (available + locked) + feeUnits = supply, plus,
// with borrow/lend, what the pools hold: Σ lent − Σ borrowed + their interest lines (margin/pools.ts).
//
// Supply: the sum of deposits of an asset minus its withdrawals. Deposits are
// refused once an asset's supply would pass MAX_SAFE_INTEGER. Since trades only move units
// between accounts and into the fee column, every balance, every sum of balances and every credit a fill makes is then
// bounded by the supply, so no settlement step can overflow, and none needs a runtime check that
// could fail half-way through a match.

import { assert, isUnsignedSafe } from '../assert.js';
import type { SnapshotReader, SnapshotWriter, StateDigest } from '../parts.js';
import { addUnits, subUnits, type AmountUnits } from '../units.js';

export class Ledger {
  readonly available: Float64Array;
  readonly locked: Float64Array;
  readonly supply: Float64Array;
  /** Fees collected per asset (by asset index). */
  readonly feeUnits: Float64Array;
  /** Called with the account whose available + locked units changed (margin/trigger-index.ts). */
  touched: (accountId: number) => void = () => {};

  constructor(
    maxAccounts: number,
    readonly assetCount: number,
  ) {
    this.available = new Float64Array((maxAccounts + 1) * assetCount);
    this.locked = new Float64Array((maxAccounts + 1) * assetCount);
    this.supply = new Float64Array(assetCount);
    this.feeUnits = new Float64Array(assetCount);
  }

  cell(accountId: number, assetIndex: number): number {
    const cell = accountId * this.assetCount + assetIndex;
    assert(assetIndex >= 0 && assetIndex < this.assetCount && cell < this.available.length, 'balance cell out of range');
    return cell;
  }

  availableUnits(accountId: number, assetIndex: number): AmountUnits {
    return this.available[this.cell(accountId, assetIndex)] as AmountUnits;
  }

  lockedUnits(accountId: number, assetIndex: number): AmountUnits {
    return this.locked[this.cell(accountId, assetIndex)] as AmountUnits;
  }

  /** True when a deposit of `amount` keeps the asset's supply a safe integer. */
  canDeposit(assetIndex: number, amount: AmountUnits): boolean {
    return Number.isSafeInteger(amount) && amount > 0 && Number.isSafeInteger(this.supply[assetIndex] + amount);
  }

  deposit(accountId: number, assetIndex: number, amount: AmountUnits): void {
    assert(this.canDeposit(assetIndex, amount), 'deposit not checked by the caller');
    const cell = this.cell(accountId, assetIndex);
    this.supply[assetIndex] = addUnits(this.supply[assetIndex] as AmountUnits, amount);
    this.available[cell] = addUnits(this.available[cell] as AmountUnits, amount);
    this.touched(accountId);
  }

  /** available → locked; the caller checked available ≥ amount. */
  lock(accountId: number, assetIndex: number, amount: AmountUnits): void {
    const cell = this.cell(accountId, assetIndex);
    this.available[cell] = subUnits(this.available[cell] as AmountUnits, amount);
    this.locked[cell] = addUnits(this.locked[cell] as AmountUnits, amount);
  }

  /** locked → available, for a cancelled, expired or price-improved part of an order. */
  unlock(accountId: number, assetIndex: number, amount: AmountUnits): void {
    const cell = this.cell(accountId, assetIndex);
    this.locked[cell] = subUnits(this.locked[cell] as AmountUnits, amount);
    this.available[cell] = addUnits(this.available[cell] as AmountUnits, amount);
  }

  /** Removes locked units that leave the account in a trade. */
  spendLocked(accountId: number, assetIndex: number, amount: AmountUnits): void {
    const cell = this.cell(accountId, assetIndex);
    this.locked[cell] = subUnits(this.locked[cell] as AmountUnits, amount);
    this.touched(accountId);
  }

  /** Adds a fee kept back from units received in a trade to the asset's fee ledger. */
  collectFee(assetIndex: number, amount: AmountUnits): void {
    assert(assetIndex >= 0 && assetIndex < this.assetCount, 'fee of an unknown asset');
    this.feeUnits[assetIndex] = addUnits(this.feeUnits[assetIndex] as AmountUnits, amount);
  }

  /** Adds units received in a trade. */
  credit(accountId: number, assetIndex: number, amount: AmountUnits): void {
    const cell = this.cell(accountId, assetIndex);
    this.available[cell] = addUnits(this.available[cell] as AmountUnits, amount);
    this.touched(accountId);
  }

  // Borrow and lend (margin/borrow-lend.ts): the pools keep the other side (margin/pools.ts).

  /** available → a pool (a lend, or a repayment). The caller checked available ≥ amount. */
  toPool(accountId: number, assetIndex: number, amount: AmountUnits): void {
    const cell = this.cell(accountId, assetIndex);
    this.available[cell] = subUnits(this.available[cell] as AmountUnits, amount);
    this.touched(accountId);
  }

  /** A pool → available (a redemption, or a borrow). */
  fromPool(accountId: number, assetIndex: number, amount: AmountUnits): void {
    const cell = this.cell(accountId, assetIndex);
    this.available[cell] = addUnits(this.available[cell] as AmountUnits, amount);
    this.touched(accountId);
  }

  // Perpetual settlement (perp/settle.ts): the settlement line keeps the other side (perp/positions.ts).

  /** available → the settlement line (a realized loss or a debt paid). The caller checked available ≥ amount. */
  toSettlement(accountId: number, assetIndex: number, amount: AmountUnits): void {
    this.toPool(accountId, assetIndex, amount);
  }

  /** The settlement line → available (a realized profit paid). */
  fromSettlement(accountId: number, assetIndex: number, amount: AmountUnits): void {
    this.fromPool(accountId, assetIndex, amount);
  }

  // The insurance fund (liquidation/fund.ts) keeps its own line; these move units to and from it.

  /** available → the insurance fund (a liquidation fee, a bankrupt account's leftover). The caller checked available ≥ amount. */
  toFund(accountId: number, assetIndex: number, amount: AmountUnits): void {
    const cell = this.cell(accountId, assetIndex);
    this.available[cell] = subUnits(this.available[cell] as AmountUnits, amount);
    this.touched(accountId);
  }

  /** The insurance fund → available (a bankrupt account's deficit the fund covers). */
  fromFund(accountId: number, assetIndex: number, amount: AmountUnits): void {
    const cell = this.cell(accountId, assetIndex);
    this.available[cell] = addUnits(this.available[cell] as AmountUnits, amount);
  }

  /** Units paid into the insurance fund from outside the exchange: the asset's supply grows. The caller checked canDeposit. */
  depositOutside(assetIndex: number, amount: AmountUnits): void {
    assert(this.canDeposit(assetIndex, amount), 'deposit not checked by the caller');
    this.supply[assetIndex] = addUnits(this.supply[assetIndex] as AmountUnits, amount);
  }

  // Withdrawals and dust conversion.

  /** available → out of the exchange: the asset's supply shrinks by the same amount. The caller checked available ≥ amount. */
  withdraw(accountId: number, assetIndex: number, amount: AmountUnits): void {
    const cell = this.cell(accountId, assetIndex);
    this.available[cell] = subUnits(this.available[cell] as AmountUnits, amount);
    this.supply[assetIndex] = subUnits(this.supply[assetIndex] as AmountUnits, amount);
    this.touched(accountId);
  }

  /** available → the exchange's fee column (the exchange takes an account's dust). */
  sweepToFees(accountId: number, assetIndex: number, amount: AmountUnits): void {
    const cell = this.cell(accountId, assetIndex);
    this.available[cell] = subUnits(this.available[cell] as AmountUnits, amount);
    this.feeUnits[assetIndex] = addUnits(this.feeUnits[assetIndex] as AmountUnits, amount);
    this.touched(accountId);
  }

  /** The exchange's fee column → an account (the exchange pays for dust it took). The caller checked the column holds amount. */
  payFromFees(accountId: number, assetIndex: number, amount: AmountUnits): void {
    const cell = this.cell(accountId, assetIndex);
    this.feeUnits[assetIndex] = subUnits(this.feeUnits[assetIndex] as AmountUnits, amount);
    this.available[cell] = addUnits(this.available[cell] as AmountUnits, amount);
    this.touched(accountId);
  }

  /**
   * Sum over the first `accountCount` accounts of available + locked units of an asset, plus the
   * fees collected in it and `heldOutside` (what the borrow/lend pools count: lent − borrowed +
   * the interest lines): equal to the asset's supply (conservation).
   */
  totalUnits(assetIndex: number, accountCount: number, heldOutside = 0n): number {
    let total = BigInt(this.feeUnits[assetIndex]) + heldOutside;
    for (let accountId = 1; accountId <= accountCount; accountId++) {
      const cell = this.cell(accountId, assetIndex);
      total += BigInt(this.available[cell]) + BigInt(this.locked[cell]);
    }
    assert(total <= BigInt(Number.MAX_SAFE_INTEGER), 'an asset total left the safe-integer range');
    return Number(total);
  }

  /** Snapshot of one account's row: available, then locked, per asset. */
  exportRowTo(w: SnapshotWriter, accountId: number): void {
    for (let assetIndex = 0; assetIndex < this.assetCount; assetIndex++) {
      w.number(this.availableUnits(accountId, assetIndex));
      w.number(this.lockedUnits(accountId, assetIndex));
    }
  }

  importRowFrom(r: SnapshotReader, accountId: number): void {
    for (let assetIndex = 0; assetIndex < this.assetCount; assetIndex++) {
      const cell = this.cell(accountId, assetIndex);
      this.available[cell] = r.number();
      this.locked[cell] = r.number();
    }
  }

  hashRowInto(d: StateDigest, accountId: number): void {
    for (let assetIndex = 0; assetIndex < this.assetCount; assetIndex++) {
      d.number(this.availableUnits(accountId, assetIndex));
      d.number(this.lockedUnits(accountId, assetIndex));
    }
  }

  /** Snapshot of the asset columns: supply, then collected fees, per asset. */
  exportTo(w: SnapshotWriter): void {
    for (let assetIndex = 0; assetIndex < this.assetCount; assetIndex++) {
      w.number(this.supply[assetIndex]);
      w.number(this.feeUnits[assetIndex]);
    }
  }

  importFrom(r: SnapshotReader): void {
    for (let assetIndex = 0; assetIndex < this.assetCount; assetIndex++) {
      this.supply[assetIndex] = r.number();
      this.feeUnits[assetIndex] = r.number();
    }
  }

  hashInto(d: StateDigest): void {
    for (let assetIndex = 0; assetIndex < this.assetCount; assetIndex++) {
      d.number(this.supply[assetIndex]);
      d.number(this.feeUnits[assetIndex]);
    }
  }

  /**
   * Every balance is a safe non-negative integer, locked units equal `lockedExpected` (what the
   * open orders hold, by cell), accounts past `accountCount` hold nothing, and each asset is
   * conserved: its balances plus its collected fees plus what the pools hold (`heldOutside`) sum
   * to its supply.
   */
  validate(lockedExpected: Float64Array, accountCount: number, assetIdOf: Uint16Array, heldOutside: (assetIndex: number) => bigint): void {
    const totals = new Array<bigint>(this.assetCount).fill(0n);
    for (let accountId = 0; accountId * this.assetCount < this.locked.length; accountId++) {
      for (let assetIndex = 0; assetIndex < this.assetCount; assetIndex++) {
        const cell = accountId * this.assetCount + assetIndex;
        assert(isUnsignedSafe(this.available[cell]) && isUnsignedSafe(this.locked[cell]), 'balance is not a safe non-negative integer');
        assert(this.locked[cell] === lockedExpected[cell], `locked units of account ${accountId} differ from its open orders`);
        assert(accountId <= accountCount || this.available[cell] === 0, 'balance of an account that does not exist');
        totals[assetIndex] += BigInt(this.available[cell]) + BigInt(this.locked[cell]);
      }
    }
    for (let assetIndex = 0; assetIndex < this.assetCount; assetIndex++) {
      assert(isUnsignedSafe(this.feeUnits[assetIndex]), 'collected fees are not a safe non-negative integer');
      const total = totals[assetIndex] + BigInt(this.feeUnits[assetIndex]) + heldOutside(assetIndex);
      assert(total === BigInt(this.supply[assetIndex]), `asset ${assetIdOf[assetIndex]} is not conserved`);
    }
  }
}
