// Order ids: a keyed permutation of the per-exchange order number.
//
// Clients must not read the order flow off the ids (consecutive numbers would reveal how many
// orders others placed between two of theirs, and when), yet replay must reproduce every id. A
// balanced 4-round Feistel network over 52 bits, keyed by config.orderIdKey, maps the order
// number 1, 2, 3 … to opaque ids: a Feistel network is a bijection whatever its round function,
// so ids never collide, and every id is below 2^52, inside the JavaScript safe-integer range.
// All arithmetic is 32-bit integer (Math.imul, shifts) on 26-bit halves; splitting and joining
// the halves divides by a power of two only, which is exact.

import { assert } from './assert.js';

const HALF_BITS = 26;
const HALF_SPAN = 1 << HALF_BITS; // 2^26
const HALF_MASK = HALF_SPAN - 1;
const ROUNDS = 4;

/** The number of distinct ids: 2^52. */
export const ORDER_ID_SPAN = HALF_SPAN * HALF_SPAN;

/** Round function: a 32-bit integer mix of one half, the key and the round, cut to 26 bits. */
function roundMix(half: number, key: number, round: number): number {
  let x = (half ^ Math.imul(key, 0x9e3779b1) ^ Math.imul(round + 1, 0x85ebca6b)) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
  x ^= x >>> 16;
  return x & HALF_MASK;
}

/** Maps an order number in 0..2^52-1 to its id; a bijection for every key. */
export function permuteOrderNumber(orderNumber: number, key: number): number {
  assert(Number.isSafeInteger(orderNumber) && orderNumber >= 0 && orderNumber < ORDER_ID_SPAN, 'order number out of range');
  let right = orderNumber % HALF_SPAN;
  let left = (orderNumber - right) / HALF_SPAN;
  for (let round = 0; round < ROUNDS; round++) {
    const next = left ^ roundMix(right, key, round);
    left = right;
    right = next;
  }
  const id = left * HALF_SPAN + right;
  assert(id < ORDER_ID_SPAN, 'order id past 52 bits');
  return id;
}

/** The inverse permutation: recovers the order number of an id (tests and tooling). */
export function unpermuteOrderId(orderId: number, key: number): number {
  assert(Number.isSafeInteger(orderId) && orderId >= 0 && orderId < ORDER_ID_SPAN, 'order id out of range');
  let right = orderId % HALF_SPAN;
  let left = (orderId - right) / HALF_SPAN;
  for (let round = ROUNDS - 1; round >= 0; round--) {
    const previous = right ^ roundMix(left, key, round);
    right = left;
    left = previous;
  }
  return left * HALF_SPAN + right;
}
