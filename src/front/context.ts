// What every route handler on a front thread shares: configuration, the engine link, the read
// models, and one reused record object of each kind for decoding outbound records (handlers run
// synchronously on one thread, so one of each is enough and nothing is allocated per record).

import type { Logger } from 'pino';
import type { MarketInfo, ServerConfig, AssetConfig } from '../config.js';
import type { EngineLink, PendingRequest, SubmitResult } from './engine-link.js';
import type { MarketData } from './market-data.js';
import type { MarketHistory } from './market-history.js';
import { sendError, type RequestContext } from './http.js';
import { Errors, type ApiError } from '../errors.js';
import { newRecordScratch } from '../../engine/bus/types.js';
import type { Command } from '../../engine/bus/types.js';
import type { AccountHistoryReader } from '../../engine/store/history-account.js';
import type { AccountSettingsStore } from './account-settings.js';
import type { FrontMetrics } from './front-metrics.js';

export interface FrontContext {
  frontId: number;
  config: ServerConfig;
  marketsBySymbol: Map<string, MarketInfo>;
  assetsBySymbol: Map<string, AssetConfig>;
  link: EngineLink;
  data: MarketData;
  log: Logger;
  // Public trade and candle history (LMDB)
  history: MarketHistory;
  /** Account history and settings, read from LMDB. */
  accountHistory: AccountHistoryReader;
  settings: AccountSettingsStore;
  /** This thread's operating counters (absent in tests that build a context by hand). */
  metrics?: FrontMetrics;
}

export const scratch = newRecordScratch();

/** The error a request gets when its command could not be submitted (503); null when it was. */
export function submitError(submitted: SubmitResult): ApiError | null {
  if (submitted === 'ring_full') return Errors.engineBusy;
  if (submitted === 'too_many_pending') return Errors.tooManyPending;
  return null;
}

/**
 * Submits a command for a request; answers the request itself when it cannot. True if submitted.
 * Routes use the engine calls (engine-calls/), which submit the same way.
 */
export function callEngine(front: FrontContext, ctx: RequestContext, fill: (cmd: Command) => void, pending: PendingRequest): boolean {
  const submitted = front.link.submit(fill, pending);
  if (submitted === 'ok') ctx.engineBound = true;
  const error = submitError(submitted);
  if (error !== null) sendError(ctx, error);
  return error === null;
}

export function marketFor(front: FrontContext, symbol: unknown): MarketInfo | undefined {
  return typeof symbol === 'string' ? front.marketsBySymbol.get(symbol) : undefined;
}
