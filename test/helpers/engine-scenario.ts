// Scenario tables for the engine core: one line per command with what it must produce.
//
// A line names the command, optionally its engine time (µs after the scenario starts), and its
// expected result: a result code, or the status / expiry reason / executed quantity of the order
// response addressed to it, the trades it caused ([price, qty] in order; none unless listed),
// balances after it ([account, asset, available, locked]) and the book after it. Lines may label
// a place (`as`) so later lines refer to its order id. A line without `code` must not be
// rejected. The harness checks invariants and conservation after every line.

import { expect } from 'vitest';
import {
  ExpiryReason,
  OrderStatus,
  RecordType,
  ResultCode,
  type Command,
  type EngineConfig,
  type ResultRec,
} from '../../engine/bus/types.js';
import { BASE, EngineHarness, FRONT, OTHER, QUOTE, cmd, responseOf, tradesOf, type Rec } from './engine-harness.js';

export type Ids = Record<string, number>;

export interface Step {
  note: string;
  /** Engine time in µs after the scenario's start; default: unchanged. */
  at?: number;
  do: Partial<Command> | ((ids: Ids) => Partial<Command>);
  /** Label the order this place creates; its id becomes ids[label] once a response names it. */
  as?: string;
  code?: ResultCode;
  /** Status of the order response to this command; `null`: no response now (a delayed place). */
  status?: OrderStatus | null;
  reason?: ExpiryReason;
  executed?: number;
  /** Statuses of responses to earlier labelled places that arrive with this command. */
  responses?: Record<string, OrderStatus>;
  trades?: [number, number][];
  balances?: [number, number, number, number][];
  book?: { bids: [number, number][]; asks: [number, number][]; market?: number };
  check?: (records: Rec[], h: EngineHarness, ids: Ids) => void;
}

export const A = 1;
export const B = 2;
export const C = 3;
export const D = 4;
export const START_QUOTE = 100_000;
export const START_BASE = 1_000;

/** Four accounts A–D, each with START_QUOTE quote units and START_BASE units of both bases. */
export function fourAccounts(h: EngineHarness): void {
  for (let seed = 1; seed <= 4; seed++) {
    const accountId = h.createAccount(seed);
    h.apply(cmd.deposit(accountId, QUOTE, START_QUOTE));
    h.apply(cmd.deposit(accountId, BASE, START_BASE));
    h.apply(cmd.deposit(accountId, OTHER, START_BASE));
  }
}

export function runScenario(config: EngineConfig, steps: Step[], setup: (h: EngineHarness) => void = fourAccounts): EngineHarness {
  const h = new EngineHarness(config);
  setup(h);
  const start = h.timeUs;
  const ids: Ids = {};
  const requestOf: Record<string, number> = {};
  steps.forEach((step, index) => {
    const where = `line ${index + 1}: ${step.note}`;
    const fields = typeof step.do === 'function' ? step.do(ids) : step.do;
    const records = h.apply(fields, step.at === undefined ? h.timeUs : start + step.at);
    const requestId = h.lastRequestId();
    if (step.as) requestOf[step.as] = requestId;
    for (const [label, labelRequest] of Object.entries(requestOf)) {
      const response = responseOf(records, labelRequest);
      if (response) ids[label] = response.orderId;
    }
    checkResult(step, records, requestId, where);
    checkResponses(step, records, requestId, requestOf, where);
    expect(tradesOf(records).map((t) => [t.priceTicks, t.qtyLots]), `${where}: trades`).toEqual(step.trades ?? []);
    for (const [accountId, assetId, available, locked] of step.balances ?? []) {
      expect(h.balance(accountId, assetId), `${where}: balance of account ${accountId} asset ${assetId}`).toEqual([available, locked]);
    }
    if (step.book) {
      const book = h.book(step.book.market);
      expect({ bids: book.bids, asks: book.asks }, `${where}: book`).toEqual({ bids: step.book.bids, asks: step.book.asks });
    }
    step.check?.(records, h, ids);
  });
  return h;
}

function checkResult(step: Step, records: Rec[], requestId: number, where: string): void {
  const results = records.filter((r): r is ResultRec & { type: RecordType.Result } => r.type === RecordType.Result && r.requestId === requestId && r.frontId === FRONT);
  if (step.code === undefined) {
    const rejected = results.filter((r) => r.code !== ResultCode.Ok).map((r) => ResultCode[r.code]);
    expect(rejected, `${where}: unexpected rejection`).toEqual([]);
    return;
  }
  expect(results.map((r) => ResultCode[r.code]), `${where}: result code`).toEqual([ResultCode[step.code]]);
}

function checkResponses(step: Step, records: Rec[], requestId: number, requestOf: Record<string, number>, where: string): void {
  if (step.status !== undefined) {
    const response = responseOf(records, requestId);
    if (step.status === null) {
      expect(response, `${where}: no response yet`).toBeUndefined();
    } else {
      expect(response, `${where}: order response`).toBeDefined();
      expect(OrderStatus[response!.status], `${where}: status`).toBe(OrderStatus[step.status]);
      expect(ExpiryReason[response!.expiryReason], `${where}: expiry reason`).toBe(ExpiryReason[step.reason ?? ExpiryReason.None]);
      if (step.executed !== undefined) expect(response!.executedQtyLots, `${where}: executed lots`).toBe(step.executed);
    }
  }
  for (const [label, status] of Object.entries(step.responses ?? {})) {
    const response = responseOf(records, requestOf[label]);
    expect(response && OrderStatus[response.status], `${where}: response to ${label}`).toBe(OrderStatus[status]);
  }
}
