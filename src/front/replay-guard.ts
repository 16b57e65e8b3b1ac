// Replay protection for signed requests: a request whose signature was already accepted inside its
// validity window is refused, on whichever front thread it arrives.
//
// Where the check lives: a signed request is valid from its timestamp (less 5 s of clock skew)
// until timestamp + window (at most 60 s). Within that time an eavesdropper (or a retrying
// proxy) could send it again, possibly on another connection that the kernel hands to another
// front thread, so a per-thread set would miss it. The set therefore lives in one
// SharedArrayBuffer that every front thread attaches: an open-addressing table of signatures,
// each kept until its request's window has passed, guarded by a spinlock (one compare-and-swap;
// the critical section is at most PROBE_LIMIT slot reads and one write, far shorter than the
// ~60 µs signature verification that precedes it, so two threads rarely meet there).
//
// Bounded memory: SLOT_COUNT slots of 16 bytes (64 bits of the signature, an expiry second and an
// owner), allocated once (16 MiB by default). An entry expires with its request's window, and an expired
// slot is reused. Each signature is looked for in at most PROBE_LIMIT slots from its hash; when all
// of them hold live entries the request is refused with 429 TOO_MANY_REQUESTS rather than
// accepted unchecked. With every request at the maximum 60 s window that allows about
// SLOT_COUNT / 61 s ≈ 17,000 signed requests per second sustained (about 170,000 with the
// default 5 s window), above what the signature verification of two front threads can do.
//
// Why 64 bits of the signature suffice: ed25519 signatures are deterministic and libsodium
// refuses non-canonical ones, so one signed message has exactly one accepted signature; two
// different accepted requests colliding on 64 bits is a 2^-64 event per pair.
//
// Owners: REST requests record owner 0, and any second use is a replay. WebSocket subscribe
// signatures (src/front/streams/connection.ts) record a nonzero hash of the client's address, and a second use
// from the same address is allowed: the subscribe signing string holds only a timestamp and a
// window, so one client's connections subscribing in the same millisecond sign identically.
//
// Clients are unaffected as long as they sign each request anew (ccxt and the official clients
// stamp every request with the current millisecond); a client that retries by resending the same
// signed bytes is refused and must re-sign.
//
// Restarts: the table lives in memory and dies with the process, so what an earlier process on the
// same data directory accepted is not in it, and the journal cannot rebuild it: it holds neither
// signatures nor the signed reads and subscribes that change no state. Rather than write every
// signature to disk before its answer, the new process refuses every signed request (REST and
// WebSocket subscribe) stamped at or before a floor, answering 401 UNAUTHORIZED ("signed before
// the server restarted"; 4001 on WebSocket). The floor is the clock reading taken just after the
// data directory's lock was won, plus FUTURE_TOLERANCE_MS (src/auth.ts):
//   - winning the lock means the earlier process is gone (its lock's owner no longer runs), so it
//     accepted its last request at or before that reading;
//   - a request is accepted only while its timestamp ≤ now + FUTURE_TOLERANCE_MS (a client clock
//     up to 5 s fast), so every request it accepted was stamped at or before reading + 5 s.
// Everything stamped later than the floor is new to this data directory, and from start-up on the
// table covers it as usual. src/main.ts sets the floor only when the journal holds something (a
// directory that never knew an account never accepted a signed request) and, so that clients
// with a right clock never meet it, starts listening only once the clock has passed it: a restart
// whose recovery takes less than 5 s waits for the rest. The rule assumes the wall clock does
// not step backwards across a restart (as the validity window itself does).

const LOCK_INDEX = 0;
/** The lock has a 64-byte line to itself; the restart floor (a float64 of ms) sits on the next. */
const HEADER_INTS = 32;
const FLOOR_BYTE_OFFSET = 64;
const SLOT_INTS = 4;
export const SLOT_COUNT = 1 << 20;
export const PROBE_LIMIT = 32;
/** Expiry seconds are counted from 2020-01-01 so they fit a signed 32-bit integer until 2088. */
const EPOCH_MS = 1_577_836_800_000;

export type ReplayCheck = 'ok' | 'replayed' | 'full';

export class ReplayGuard {
  private readonly table: Int32Array;
  private readonly floor: Float64Array;
  private readonly mask: number;

  private constructor(readonly sab: SharedArrayBuffer, private readonly slotCount: number) {
    this.table = new Int32Array(sab);
    this.floor = new Float64Array(sab, FLOOR_BYTE_OFFSET, 1);
    this.mask = slotCount - 1;
  }

  static create(slotCount = SLOT_COUNT): ReplayGuard {
    if (slotCount < PROBE_LIMIT || (slotCount & (slotCount - 1)) !== 0) throw new Error('replay guard slot count must be a power of two ≥ PROBE_LIMIT');
    return new ReplayGuard(new SharedArrayBuffer((HEADER_INTS + slotCount * SLOT_INTS) * 4), slotCount);
  }

  static attach(sab: SharedArrayBuffer): ReplayGuard {
    return new ReplayGuard(sab, (sab.byteLength / 4 - HEADER_INTS) / SLOT_INTS);
  }

  /**
   * Records `signature` (≥ 8 bytes) as used until `expiresAtMs`; 'replayed' when it is already
   * recorded and not expired (unless both uses name the same nonzero `owner`), 'full' when its
   * probe sequence holds only live entries.
   */
  check(signature: Uint8Array, expiresAtMs: number, nowMs: number, owner = 0): ReplayCheck {
    const keyA = (signature[0] | (signature[1] << 8) | (signature[2] << 16) | (signature[3] << 24)) | 0;
    const keyB = (signature[4] | (signature[5] << 8) | (signature[6] << 16) | (signature[7] << 24)) | 0;
    const nowSec = Math.floor((nowMs - EPOCH_MS) / 1000);
    // Kept one second past the window's end, so rounding never frees a slot early.
    const expirySec = Math.ceil((expiresAtMs - EPOCH_MS) / 1000) + 1;
    const t = this.table;
    const start = (keyA ^ Math.imul(keyB, 0x9e3779b1)) & this.mask;
    while (Atomics.compareExchange(t, LOCK_INDEX, 0, 1) !== 0) {
      // Spin: the holder is inside a few dozen reads and one write.
    }
    try {
      let free = -1;
      for (let probe = 0; probe < PROBE_LIMIT; probe++) {
        const base = HEADER_INTS + ((start + probe) & this.mask) * SLOT_INTS;
        const expiry = t[base + 2];
        if (expiry === 0) {
          // Never used: no live entry lies further along this sequence.
          if (free < 0) free = base;
          break;
        }
        if (expiry <= nowSec) {
          if (free < 0) free = base;
          continue;
        }
        if (t[base] === keyA && t[base + 1] === keyB) return owner !== 0 && t[base + 3] === owner ? 'ok' : 'replayed';
      }
      if (free < 0) return 'full';
      t[free] = keyA;
      t[free + 1] = keyB;
      t[free + 2] = expirySec;
      t[free + 3] = owner;
      return 'ok';
    } finally {
      Atomics.store(t, LOCK_INDEX, 0);
    }
  }

  /**
   * Refuses every request stamped at or before `floorMs` (see "Restarts" above). Set once, before
   * any front thread attaches, so the threads read it without synchronisation.
   */
  setRestartFloor(floorMs: number): void {
    this.floor[0] = floorMs;
  }

  /** True when a request stamped `timestampMs` may have been accepted before the restart. */
  signedBeforeRestart(timestampMs: number): boolean {
    return timestampMs <= this.floor[0];
  }

  get capacity(): number {
    return this.slotCount;
  }

  /**
   * Slots holding a signature whose window has not ended, for the metrics endpoint: one read per
   * slot without the lock (a reading, not a decision), a few milliseconds for the default table.
   */
  liveCount(nowMs: number): number {
    const nowSec = Math.floor((nowMs - EPOCH_MS) / 1000);
    const t = this.table;
    let live = 0;
    for (let base = HEADER_INTS + 2; base < t.length; base += SLOT_INTS) {
      if (t[base] > nowSec) live++;
    }
    return live;
  }
}

/** A nonzero 32-bit owner for `check` from a client address (FNV-1a over its bytes). */
export function addressOwner(address: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < address.length; i++) h = Math.imul(h ^ address[i], 0x01000193);
  return h | 0 || 1;
}
