// WebSocket streams on a front thread, fed by the engine's durable event records.
//
// Events update the read models first (books, key registry), then fan out through uWS pub/sub:
// a public stream's topic is its name (`depth.SOL_USDC`); a private stream's topic is prefixed
// with the account id (`7|account.orderUpdate`) while the envelope's `stream` stays the name the
// client subscribed to. Payloads are only built when the topic has subscribers.
//
// The rooms: streams.ts is the core (the engine link's event handler and the clock);
// table.ts lists the stream families, one file each (depth.ts, trades.ts, tickers.ts for ticker
// and bookTicker, klines.ts, account.ts for the private streams), as the routes are listed; and
// connection.ts holds the WebSocket connections and the subscribe protocol.

export { Streams } from './streams.js';
export { STREAM_FAMILIES, type FamilyTable } from './table.js';
export { TICK_MS, type StreamFamily } from './family.js';
export {
  mountWebSocket, MAX_SUBSCRIPTIONS, MAX_MESSAGE_BYTES, MAX_BACKPRESSURE_BYTES, CLOSE_MESSAGE_TOO_BIG, CLOSE_SLOW_CONSUMER,
  CLOSE_MESSAGE_RATE,
} from './connection.js';
