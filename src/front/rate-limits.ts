// Request rate limits of the public port, as one front thread applies them (the shared tables are
// rate-table.ts and connection-table.ts; the admin port has none).
//
// What is counted, and where, so that a flood buys no CPU and cannot spend someone else's budget:
//
// - Per client address, every HTTP request and WebSocket upgrade, first thing in the handler:
//   before the route lookup, the body read, the JSON parse and the ~60–120 µs ed25519 check. This
//   is the limit that bounds what one host can make the server do, signed or not.
// - Per API key, only requests whose signature verified (and that were not replays). The
//   X-API-Key header is public: anyone can send junk under a victim's key, so counting unverified
//   requests against the key would let an attacker lock the victim out. Instead the key's bucket is
//   only *looked at* before verification (a key already over its limit is answered 429 without
//   spending a verification: only its owner can have emptied it) and *charged* after. The junk's
//   verification cost is bounded by the sender's per-address limit. Two threads may both pass the
//   look and then charge: the charge refuses the one that would exceed the limit.
// - Per client address, open WebSocket connections, counted at the upgrade.
// - Per WebSocket connection, messages (a token bucket in the connection's own state: one
//   connection is served by one thread). A connection over its rate is closed with 1008.
//
// Addresses: an IPv4 address (also IPv4-mapped IPv6) counts as itself; an IPv6 address counts by
// its /64 prefix, the block one host is usually given. The address is the connecting peer's: behind
// a proxy every client shares the proxy's budget.

import type { RateLimitConfig } from '../config.js';
import { Errors, type ApiError } from '../errors.js';
import { ConnectionTable } from './connection-table.js';
import { RateTable, hashBytes, hashString, rateRule, type ClientKey, type RateRule } from './rate-table.js';

/** 65,536 slots of 16 bytes (1 MiB) per rate table, 16,384 for connections. */
const RATE_SLOT_COUNT = 1 << 16;
const CONNECTION_SLOT_COUNT = 1 << 14;
/** A WebSocket connection may send four seconds' worth of messages at once. */
const WS_BURST_SECONDS = 4;

export interface RateLimitTables {
  addressSab: SharedArrayBuffer;
  keySab: SharedArrayBuffer;
  connectionSab: SharedArrayBuffer;
}

/** Creates the shared tables once, in the main thread, for every front thread to attach. */
export function createRateLimitTables(): RateLimitTables {
  return {
    addressSab: RateTable.create(RATE_SLOT_COUNT).sab,
    keySab: RateTable.create(RATE_SLOT_COUNT).sab,
    connectionSab: ConnectionTable.create(CONNECTION_SLOT_COUNT).sab,
  };
}

/** The bytes that identify a client address: IPv4 as is, IPv6 by its /64 prefix. */
export function addressIdentity(address: Uint8Array): Uint8Array {
  if (address.length !== 16) return address;
  let mapped = address[10] === 0xff && address[11] === 0xff;
  for (let i = 0; i < 10 && mapped; i++) mapped = address[i] === 0;
  return mapped ? address.subarray(12) : address.subarray(0, 8);
}

function retryAfterS(waitMs: number): number {
  return Math.max(1, Math.ceil(waitMs / 1000));
}

/** A WebSocket connection's message bucket (GCRA: its theoretical arrival time, ms). */
export interface MessageBucket {
  tatMs: number;
}

export class RateLimits {
  private readonly addresses: RateTable;
  private readonly keys: RateTable;
  private readonly connections: ConnectionTable;
  private readonly addressRule: RateRule | null;
  private readonly keyRule: RateRule | null;
  private readonly messageRule: RateRule | null;
  /** Reused for hashing: a thread runs one handler at a time. */
  private readonly scratch: ClientKey = { keyA: 0, keyB: 0 };

  constructor(readonly config: RateLimitConfig, tables: RateLimitTables) {
    this.addresses = RateTable.attach(tables.addressSab);
    this.keys = RateTable.attach(tables.keySab);
    this.connections = ConnectionTable.attach(tables.connectionSab);
    this.addressRule = config.addressRequestsPerS > 0 ? rateRule(config.addressRequestsPerS, config.addressRequestBurst) : null;
    this.keyRule = config.keyRequestsPerS > 0 ? rateRule(config.keyRequestsPerS, config.keyRequestBurst) : null;
    this.messageRule = config.wsMessagesPerS > 0 ? rateRule(config.wsMessagesPerS, config.wsMessagesPerS * WS_BURST_SECONDS) : null;
  }

  /** Counts one request from `address` (uWS's 4- or 16-byte form); the 429 when over the limit. */
  takeAddress(address: ArrayBuffer, nowMs: number): ApiError | null {
    if (!this.addressRule) return null;
    const key = hashBytes(addressIdentity(new Uint8Array(address)), this.addresses.seed, this.scratch);
    const waitMs = this.addresses.take(key, this.addressRule, nowMs);
    return waitMs > 0 ? Errors.addressRateLimited(retryAfterS(waitMs)) : null;
  }

  /** Before verification: the 429 when `apiKey`'s verified requests already reached the limit. */
  peekKey(apiKey: string, nowMs: number): ApiError | null {
    if (!this.keyRule) return null;
    const waitMs = this.keys.peek(hashString(apiKey, this.keys.seed, this.scratch), this.keyRule, nowMs);
    return waitMs > 0 ? Errors.keyRateLimited(retryAfterS(waitMs)) : null;
  }

  /** After verification: counts one request of `apiKey`; the 429 when over the limit. */
  takeKey(apiKey: string, nowMs: number): ApiError | null {
    if (!this.keyRule) return null;
    const waitMs = this.keys.take(hashString(apiKey, this.keys.seed, this.scratch), this.keyRule, nowMs);
    return waitMs > 0 ? Errors.keyRateLimited(retryAfterS(waitMs)) : null;
  }

  /**
   * Counts one more WebSocket connection from `address`: its key, to give back to
   * `closeConnection`, or the refusal. Null when connections are not limited.
   */
  openConnection(address: ArrayBuffer): ClientKey | ApiError | null {
    const max = this.config.wsConnectionsPerAddress;
    if (max <= 0) return null;
    const key = hashBytes(addressIdentity(new Uint8Array(address)), this.connections.seed, { keyA: 0, keyB: 0 });
    const verdict = this.connections.open(key, max);
    if (verdict === 'limit') return Errors.tooManyConnections;
    if (verdict === 'full') return Errors.connectionTableFull;
    return key;
  }

  closeConnection(key: ClientKey): void {
    this.connections.close(key);
  }

  /** Counts one message on a connection; false when it is over the message rate. */
  takeMessage(bucket: MessageBucket, nowMs: number): boolean {
    const rule = this.messageRule;
    if (!rule) return true;
    // The clamp (kept) undoes a clock that stepped back, as in RateTable.
    bucket.tatMs = Math.min(bucket.tatMs, nowMs + rule.toleranceMs + rule.intervalMs);
    const tat = Math.max(bucket.tatMs, nowMs);
    if (tat - rule.toleranceMs > nowMs) return false;
    bucket.tatMs = tat + rule.intervalMs;
    return true;
  }
}
