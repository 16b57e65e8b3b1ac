// The journal and its recovery: how the exchange rebuilds its state at start-up from the newest
// valid snapshot plus the journal records after it (engine/store/journal-store.ts holds both).
//
// A journal record (schemas/exchange.fbs JournalRecord, by sequence; a batch's records are stored
// back to back as one run, engine/store/journal-store.ts) is the stamped command and the digest of
// the outputs it produced (digest.ts); each run carries one crc32 over all of it, chained to the
// run before (formats 4 to 6; formats 2 and 3, still read, chain one per record). The outputs
// of format 5 carry an order's event in its answer where the two would repeat each other
// (engine/core/output.ts eventsInAnswers) and digest in two lanes (digest.ts); replay applies the
// commands a journal recorded before format 5 with events apart and digests them in one murmur
// chain, so their stored digests still check. The outputs of format 6 write a taker's balances
// once, when its match ends, and carry a taker's last fill in its answer (output.ts
// takerSummary); replay writes both after each fill for the commands recorded before format 6.
// A snapshot (a file per snapshot) is the engine state after the Snapshot command at its
// sequence, with the state hash at export and the configuration fingerprint; both layouts are in
// engine/store/journal-layout.ts. The journal worker writes a snapshot only once its sequence is durable, and
// compaction removes only records older than the oldest snapshot it keeps (never the record at a
// snapshot's own sequence, whose checksum continues the chain), so a kept snapshot always has
// every record after it.
//
// Recovery decision table (recover(), at start-up, before anything is served):
//
//   what recovery finds                                      decision
//   -------------------------------------------------------  -------------------------------------
//   engine configuration differs from the journal's          halt: EngineConfigChangedError
//     ... only by margin parameters or perpetual markets     accept: record the change after the
//         (with or without realization at mark), or by        ones recorded before (below)
//         realization at mark or the position limit, the
//         journal's configuration lacked
//   a recorded change that no gain from the configuration    halt: EngineConfigChangedError
//     before it to the one after it explains
//   records, but no or another journal format marker          halt: JournalFormatError
//     (or where its sealed runs, or its records of format
//     5, begin is not a sequence)
//   no records, no snapshot                                   fresh exchange: start at seq 1
//   snapshot: bad file checksum, other configuration (at     skip it (logged), try the next older
//     or below a recorded change: other than the one in       one
//     force at its sequence), sequence past the journal's
//     end, its own record missing or not a Snapshot
//     command, or a state that does not load or hashes
//     differently after loading
//   a valid snapshot at s                                     load it, replay records s+1 …
//   no valid snapshot, records start at 1                     replay every record from 1
//   no valid snapshot, records start after 1 (compacted)     halt: JournalGapError
//   no records, no valid snapshot, but snapshot files         halt: JournalGapError
//   a clean-stop mark past the journal's last record          halt: JournalGapError (tail lost)
//   a sequence missing (k follows k - 2 or more)              halt: JournalGapError
//   a record (format 4: a run) whose checksum does not chain  halt: JournalChecksumError
//   a stored value that is no whole number of records         halt: JournalRecordSizeError
//   a record whose replayed outputs digest differently        halt: JournalOutputDigestError
//   a clean-stop mark at seq c (state hash at shutdown)       halt: StateHashMismatchError
//     whose hash differs after replaying through c
//   records 1..n (or s+1..n) all check                        resume at n + 1
//   a recorded change after N, but the journal ends before N  halt: JournalGapError
//   a recorded change whose new fingerprint never got stored  accept it again (it is re-recorded)
//
// After a crash the journal holds a prefix of what was sequenced: LMDB commits a batch
// atomically and the journal worker publishes seqDurable (the only thing that lets a response or
// stream event out) after the batch is flushed. So recovery's "resume at n + 1" loses nothing
// that was acknowledged, and a command that was sequenced but not durable is simply gone: its
// requester never got an answer, and no stream showed its effects.
//
// Replay reproduces the state only under the engine configuration the journal was written with
// (markets, assets, limits, fees, price bands, speed bump), so its fingerprint is stored with the
// journal on first start and compared on every later start.
//
// Two kinds of change are accepted, each as the configuration the journal had plus something it
// lacked; an operator upgrading through each version meets them one after the other, and the
// journal records them as a chain, in the order they took effect.
//   - Margin parameters (EngineConfig.margin: collateral parameters and borrow/lend pools) gained
//     by a configuration without them. Under a configuration without them the engine has no pool:
//     every BorrowLend is refused (LendPoolUnknown) and changes nothing, no position or interest
//     timer can exist, the withdrawal margin test applies only to an account that borrows, and the
//     mark price (margin/mark.ts) serves only borrow/lend; index prices and account settings have
//     their own configuration keys, which stay compared. So the state the journal reaches has
//     nothing in the pools, and the state hash does not cover untouched pools (margin/pools.ts).
//   - Perpetual markets (MarketKind.Perp) gained after all of the spot markets, by a configuration
//     without any. Under the journal's configuration those markets did not exist, so no record
//     names them (a PlaceOrder for an unknown market id was refused, UnknownMarket, and is refused
//     again under that configuration); the moved state has their books fresh and no position, and
//     neither a fresh perpetual book nor an empty position table adds to the state hash.
//   - Realization of perpetual PnL at mark (EngineConfig.realizePnlIntervalUs), its pass in steps
//     (EngineConfig.realizeStepPositions), the funding pass in steps
//     (EngineConfig.fundingStepPositions), the hour's interest pass in steps
//     (EngineConfig.interestStepAccounts, which leaves with the margin parameters) and the
//     accounts' position limit (EngineConfig.positionLimitUnits) gained by a configuration without
//     them: none is state between commands of the journal (a pass without steps ends in the
//     command that starts it),
//     a journal written without them replays without them (its records were applied so), and
//     commands after the change meet them.
// Several at once is one change. The rule (checkJournalIdentity, recover):
//   - the start that meets a configuration that is the journal's (CONFIG_KEY) plus such a gain
//     appends to the recorded chain (journal-layout.ts CONFIG_CHANGES_KEY; a chain of one stays
//     under CONFIG_CHANGE_KEY, as servers that accepted a single change wrote it, and such a
//     journal is read as a chain of one) the journal's last sequence N and the previous
//     fingerprint, then stores the new fingerprint (CONFIG_KEY), and reports N (logged as a
//     warning);
//   - the configuration in force before each change is derived from the one after it, from
//     today's backwards, as the later one without the gain (configsInForce): it has exactly the
//     fingerprint recorded with the change, else the journal is refused;
//   - replay runs the records at or below each change's N (and above the change before it) under
//     the configuration in force then, so a BorrowLend or an order on a perpetual market refused
//     then is refused again and every output digest still checks (replayed under a later
//     configuration it could succeed, and recovery would halt on its digest); at each N in turn
//     the state moves into an engine under the next configuration (its snapshot bytes: no pool
//     in them, every pool empty, no perpetual book or position), which must have the same state
//     hash, and replay goes on under it;
//   - a snapshot carries the fingerprint of the configuration in force at its sequence, and loads
//     into that configuration's engine (snapshotFingerprintAt).
// Anything else that differs, a changed or removed margin section, perpetual markets added to a
// configuration that has some or placed before a spot market, is still refused.

import { createHash } from 'node:crypto';
import { Exchange } from '../core/exchange.js';
import { exportSnapshot, importSnapshot } from '../core/snapshot.js';
import {
  JOURNAL_CHECKSUM_OFFSET,
  JOURNAL_DIGEST_OFFSET,
  JOURNAL_RECORD_BYTES,
  SLOT_BYTES,
  newStampedRec,
  readStamped,
} from '../bus/codec.js';
import { MarketKind, type EngineConfig, type RecordSink } from '../bus/types.js';
import type { StampedRec } from '../bus/generated/records.js';
import { DIGEST_SEED, RecordDigester, finishDigest } from './digest.js';
import type { JournalStore } from '../store/journal-store.js';
import {
  CLEAN_STOP_KEY,
  CONFIG_KEY,
  FORMAT_KEY,
  JOURNAL_FORMAT,
  JOURNAL_FORMATS_READ,
  RUN_CHECKSUMS_FROM_KEY,
  FORMAT_5_FROM_KEY,
  FORMAT_6_FROM_KEY,
  EVENTS_IN_ANSWERS_FORMATS,
  SEALED_FORMATS,
  recordChecksum,
  runChecksum,
  runSeed,
  encodeSnapshotFile,
  configChangesMeta,
  readConfigChanges,
  type ConfigChange,
} from '../store/journal-layout.js';
import { checkSnapshot } from '../store/snapshot-check.js';
import { useSha256 } from '../core/parts.js';

export { checkSnapshot };

// Every thread that recovers, snapshots or checks an engine goes through this module: its state
// hashes use Node's native SHA-256 (the same function as the core's own, @noble/hashes, about 10×
// faster here), which keeps the engine's pause for a snapshot's hash short on large states.
useSha256(() => createHash('sha256'));

export class JournalGapError extends Error {
  override name = 'JournalGapError';
}
export class JournalChecksumError extends Error {
  override name = 'JournalChecksumError';
}
export class JournalRecordSizeError extends Error {
  override name = 'JournalRecordSizeError';
}
export class EngineConfigChangedError extends Error {
  override name = 'EngineConfigChangedError';
}
export class JournalOutputDigestError extends Error {
  override name = 'JournalOutputDigestError';
}
export class StateHashMismatchError extends Error {
  override name = 'StateHashMismatchError';
}
export class JournalFormatError extends Error {
  override name = 'JournalFormatError';
}
/** A failed journal write or flush: the process stops rather than acknowledge ahead of the disk. */
export class JournalWriteError extends Error {
  override name = 'JournalWriteError';
}

/**
 * SHA-256 of the engine configuration in a canonical JSON form (keys sorted; a bigint, as the
 * margin parameters hold, as its decimal digits). An absent key adds nothing, so a configuration
 * without margin parameters keeps the fingerprint it had before the engine had them.
 */
export function engineConfigFingerprint(config: unknown): string {
  const canonical = (value: unknown): unknown => {
    if (typeof value === 'bigint') return value.toString();
    if (Array.isArray(value)) return value.map(canonical);
    if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return Object.fromEntries(entries.map(([k, v]) => [k, canonical(v)]));
    }
    return value;
  };
  return createHash('sha256').update(JSON.stringify(canonical(withoutSpotKinds(config)))).digest('hex');
}

/**
 * The configuration with each spot market's kind left out: Spot is the default, so a journal
 * written before markets had a kind keeps its fingerprint whether or not the kind is spelled out.
 */
function withoutSpotKinds(config: unknown): unknown {
  const markets = (config as { markets?: unknown } | null)?.markets;
  if (!Array.isArray(markets)) return config;
  const spotless = markets.map((market: unknown) => {
    if ((market as { kind?: unknown } | null)?.kind !== MarketKind.Spot) return market;
    const { kind: _kind, ...rest } = market as Record<string, unknown>;
    return rest;
  });
  return { ...(config as Record<string, unknown>), markets: spotless };
}

/** What the journal's identity check found: the configuration changes in force, and whether this start makes one. */
export interface JournalConfigs {
  /** The recorded changes in order, then the one this start accepts if any (empty: none). */
  changes: ConfigChange[];
  /** This start accepts the last change (recover() records it once replay has checked). */
  gained: boolean;
}

/**
 * Records the configuration's fingerprint and the journal format on first start; on later starts
 * refuses a different configuration, except one that only gained margin parameters or perpetual
 * markets (see the header), or a journal of another format.
 */
export function checkJournalIdentity(store: JournalStore, fingerprint: string, config?: EngineConfig): JournalConfigs {
  const stored = store.getMeta(CONFIG_KEY);
  const format = store.getMeta(FORMAT_KEY);
  const empty = store.lastSeq() === 0 && store.listSnapshots().length === 0;
  const recorded = readConfigChanges(store);
  const gained = stored !== undefined && stored !== fingerprint && config !== undefined && earlierConfigOf(config, stored) !== undefined;
  if (stored !== undefined && stored !== fingerprint && !gained) {
    throw new EngineConfigChangedError(
      'the engine configuration (markets, assets, limits, fees, price bands, speed bump, margin parameters) differs from ' +
        'the one this journal was written with, so replay would not rebuild the same state; start with the original ' +
        'configuration (adding margin parameters, or perpetual markets after the spot ones, to one without them are the changes accepted), or with a new data directory',
    );
  }
  if (!(format !== undefined && JOURNAL_FORMATS_READ.includes(format)) && !(empty && format === undefined)) {
    throw new JournalFormatError(`the journal has format ${format ?? '1 (no output digests)'}, this server reads formats ${JOURNAL_FORMATS_READ.slice(0, -1).join(', ')} and ${JOURNAL_FORMATS_READ[JOURNAL_FORMATS_READ.length - 1]}; use a new data directory`);
  }
  if (stored === undefined) store.putMetaSync(CONFIG_KEY, fingerprint);
  if (format !== JOURNAL_FORMAT) {
    // Where the records of this format begin goes first: a stop before the marker leaves the
    // journal in its old format, and the next start records them again.
    const next = String(store.lastSeq() + 1);
    if (format === undefined || !SEALED_FORMATS.includes(format)) store.putMetaSync(RUN_CHECKSUMS_FROM_KEY, next);
    if (format === undefined || !EVENTS_IN_ANSWERS_FORMATS.includes(format)) store.putMetaSync(FORMAT_5_FROM_KEY, next);
    store.putMetaSync(FORMAT_6_FROM_KEY, next);
    store.putMetaSync(FORMAT_KEY, JOURNAL_FORMAT);
  }
  if (gained) return { changes: [...recorded, { seq: store.lastSeq(), previousSha256: stored }], gained };
  return { changes: recorded, gained: false };
}

/**
 * The configuration in force in each era of `changes`: element i at or below changes[i].seq (and
 * above the change before it), the last one, `config`, after every change. Each earlier one is
 * the later one without what its change gained; a recorded change that no such gain explains
 * refuses the journal.
 */
function configsInForce(config: EngineConfig, changes: readonly ConfigChange[]): EngineConfig[] {
  const configs = [config];
  for (let i = changes.length - 1; i >= 0; i--) {
    const earlier = earlierConfigOf(configs[0], changes[i].previousSha256);
    if (earlier === undefined) {
      throw new EngineConfigChangedError(`the configuration change the journal records after ${changes[i].seq} is not margin parameters or perpetual markets gained by the configuration before it; start with the configuration it was recorded under, or with a new data directory`);
    }
    configs.unshift(earlier);
  }
  return configs;
}

/**
 * The configuration fingerprinted `stored` of which `config` is the gain the header accepts
 * (margin parameters, perpetual markets after the spot ones, realization at mark, its steps, the
 * funding steps, the interest pass's steps, the position limit, or several of them), or undefined.
 */
function earlierConfigOf(config: EngineConfig, stored: string): EngineConfig | undefined {
  let candidates: EngineConfig[] = [config];
  const strips: Array<(c: EngineConfig) => EngineConfig | undefined> = [
    ...GAINED_SETTINGS.map((keys) => (c: EngineConfig) => (c[keys[0]] !== undefined ? without(c, keys) : undefined)),
    withoutPerps,
  ];
  for (const strip of strips) {
    candidates = candidates.concat(candidates.map(strip).filter((c): c is EngineConfig => c !== undefined));
  }
  return candidates.slice(1).find((candidate) => engineConfigFingerprint(candidate) === stored);
}

/**
 * The settings a configuration may gain (header), each with what leaves with it: the position
 * limit, the funding steps, the realization steps, realization at mark (and its steps), the
 * interest pass's steps, margin parameters (and those steps).
 */
const GAINED_SETTINGS: ReadonlyArray<readonly (keyof EngineConfig)[]> = [
  ['positionLimitUnits'],
  ['fundingStepPositions'],
  ['realizeStepPositions'],
  ['realizePnlIntervalUs', 'realizeStepPositions'],
  ['interestStepAccounts'],
  ['margin', 'interestStepAccounts'],
];

/** `config` without the settings `keys`. */
function without(config: EngineConfig, keys: readonly (keyof EngineConfig)[]): EngineConfig {
  const rest = { ...config };
  for (const key of keys) delete rest[key];
  return rest;
}

/**
 * `config` without its perpetual markets (and their realization and funding steps), when it has
 * some and they all follow its spot markets; else undefined.
 */
function withoutPerps(config: EngineConfig): EngineConfig | undefined {
  const firstPerp = config.markets.findIndex((market) => market.kind === MarketKind.Perp);
  if (firstPerp < 0 || config.markets.slice(firstPerp).some((market) => market.kind !== MarketKind.Perp)) return undefined;
  return { ...without(config, ['realizePnlIntervalUs', 'realizeStepPositions', 'fundingStepPositions']), markets: config.markets.slice(0, firstPerp) };
}

/**
 * The state of `exchange` (under the previous configuration) in an engine under `config`, which
 * adds margin parameters or perpetual markets: the snapshot bytes have no pool and no perpetual
 * book, so every pool starts empty and every perpetual book fresh, and the state hash (which
 * covers neither) must come out the same.
 */
function underNewConfiguration(exchange: Exchange, config: EngineConfig, seq: number): Exchange {
  const next = new Exchange(config);
  importSnapshot(next, exportSnapshot(exchange));
  const hash = exchange.stateHash();
  if (!next.hasStateHash(hash)) {
    throw new StateHashMismatchError(`state hash after moving to the configuration it gained at ${seq} is ${next.stateHash()}, before it ${hash}`);
  }
  return next;
}

/** Exports the engine state as a snapshot file for the Snapshot command at `seq`. */
export function snapshotFile(exchange: Exchange, seq: number, timeUs: number, configFingerprint: string): { file: Uint8Array; stateHash: string } {
  const stateHash = exchange.stateHash();
  return { file: encodeSnapshotFile({ seq, timeUs, stateHash, configFingerprint }, exportSnapshot(exchange)), stateHash };
}

// ---------------------------------------------------------------------------------------------
// Replay

/** Folds every output written to its sink into the output digest, encoded as the ring holds it. */
export class DigestSink {
  digest = DIGEST_SEED;
  /** Whether the command's outputs digest in two lanes (journal formats 5 and 6) or in one murmur chain. */
  private lanes = true;
  private readonly digester = new RecordDigester();
  /** Each output is encoded at offset 0 of one scratch slot and folded in once written. */
  readonly sink: RecordSink = {
    view: new DataView(new ArrayBuffer(SLOT_BYTES)),
    claim: () => 0,
    written: (at) => {
      this.digest = this.digester.fold(this.sink.view, at, this.digest, this.lanes);
    },
  };
  /** Starts a command's digest: in two lanes for a record of format 5 or 6 (the default), else as formats 2 to 4. */
  begin(format5 = true): void {
    this.digest = DIGEST_SEED;
    this.lanes = format5;
  }
  finish(): number {
    return finishDigest(this.digest);
  }
}

export interface RecoveryResult {
  exchange: Exchange;
  lastSeq: number;
  lastChecksum: number;
  lastTimeUs: number;
  /** Sequence of the snapshot recovery started from (0: replayed from the first record). */
  snapshotSeq: number;
  /** Records replayed after the snapshot. */
  replayed: number;
  /** Snapshots skipped, newest first, with the reason. */
  skippedSnapshots: { seq: number; reason: string }[];
  /**
   * The sequence after which the configuration applies, when this start accepted it as the
   * journal's configuration plus margin parameters or perpetual markets (see the header); null otherwise.
   */
  configGainedMarginAt: number | null;
}

/** Where replay starts: the engine, with the sequence, checksum and engine time it is at. */
interface ReplayStart {
  exchange: Exchange;
  snapshotSeq: number;
  lastChecksum: number;
  lastTimeUs: number;
}

/**
 * The newest snapshot that checks (snapshot-check.ts), loads and hashes as recorded, in an engine
 * under the configuration it was written with (`configAt`); null when none does.
 */
function loadNewestSnapshot(
  store: JournalStore, fingerprint: string, changes: readonly ConfigChange[], configAt: (seq: number) => EngineConfig,
  skippedSnapshots: { seq: number; reason: string }[],
): ReplayStart | null {
  const journalLast = store.lastSeq();
  const rec = newStampedRec();
  for (const seq of store.listSnapshots()) {
    const skip = (reason: string) => skippedSnapshots.push({ seq, reason });
    const checked = checkSnapshot(store, seq, fingerprint, journalLast, rec, changes);
    if (typeof checked === 'string') { skip(checked); continue; }
    const { meta, payload, own } = checked;
    const candidate = new Exchange(configAt(seq));
    try {
      importSnapshot(candidate, payload);
    } catch (error) {
      skip(`does not load: ${(error as Error).message}`);
      continue;
    }
    if (!candidate.hasStateHash(meta.stateHash)) { skip('state hash differs after loading'); continue; }
    const lastChecksum = Buffer.from(own.buffer, own.byteOffset, own.length).readUInt32LE(JOURNAL_CHECKSUM_OFFSET);
    return { exchange: candidate, snapshotSeq: seq, lastChecksum, lastTimeUs: meta.timeUs };
  }
  return null;
}

/**
 * Rebuilds the engine: newest valid snapshot, then every record after it, each checked for
 * contiguity, checksum chain, size and output digest (see the decision table above). Throws the
 * named error of the table on damage. Records and snapshots run under the configuration in force
 * at their sequence (see the header), the engine moving to the next one past each change; a change
 * this start accepts is recorded once replay has checked. `onStartLoaded` is called once the state
 * replay starts from is in place (the snapshot loaded and its hash checked), before the first record.
 */
export function recover(store: JournalStore, config: EngineConfig, fingerprint: string, onStartLoaded?: () => void): RecoveryResult {
  const { changes, gained } = checkJournalIdentity(store, fingerprint, config);
  const configs = configsInForce(config, changes);
  const eraAt = (seq: number): number => {
    const era = changes.findIndex((change) => seq <= change.seq);
    return era < 0 ? changes.length : era;
  };
  const configAt = (seq: number): EngineConfig => configs[eraAt(seq)];
  const firstSeq = store.firstSeq();
  const journalLast = store.lastSeq();
  const skippedSnapshots: { seq: number; reason: string }[] = [];
  const start = loadNewestSnapshot(store, fingerprint, changes, configAt, skippedSnapshots);
  if (start === null) {
    if (firstSeq > 1) {
      throw new JournalGapError(`the journal starts at sequence ${firstSeq} (compacted) and no valid snapshot covers what came before`);
    }
    // An empty journal is a fresh start only if nothing says it held records: snapshot files
    // (here all unusable) exist only once commands were journaled.
    if (journalLast === 0 && skippedSnapshots.length > 0) {
      throw new JournalGapError(`the journal is empty, but snapshot files exist and none is usable (${skippedSnapshots.map((s) => `${s.seq}: ${s.reason}`).join('; ')})`);
    }
  }
  let { exchange, snapshotSeq, lastChecksum, lastTimeUs } = start ?? { exchange: new Exchange(configAt(0)), snapshotSeq: 0, lastChecksum: 0, lastTimeUs: 0 };
  const startSeq = snapshotSeq + 1;
  // The engine moves to the next configuration once past each change, in turn.
  let era = eraAt(snapshotSeq);
  const moveOnAfter = (seq: number): void => {
    for (; era < changes.length && seq >= changes[era].seq; era++) exchange = underNewConfiguration(exchange, configs[era + 1], changes[era].seq);
  };

  const cleanStopText = store.getMeta(CLEAN_STOP_KEY);
  const cleanStop = cleanStopText === undefined ? null : (JSON.parse(cleanStopText) as { seq: number; stateHash: string });
  const checkCleanStop = (seq: number): void => {
    if (cleanStop === null || cleanStop.seq !== seq) return;
    if (!exchange.hasStateHash(cleanStop.stateHash)) {
      throw new StateHashMismatchError(`state hash after replaying through ${seq} is ${exchange.stateHash()}, the clean stop recorded ${cleanStop.stateHash}`);
    }
  };
  checkCleanStop(startSeq - 1);
  moveOnAfter(startSeq - 1);

  onStartLoaded?.();
  const digests = new DigestSink();
  const format5From = formatFrom(store, FORMAT_5_FROM_KEY, 'records of format 5');
  const format6From = formatFrom(store, FORMAT_6_FROM_KEY, 'records of format 6');
  const replay = replayRecords(store, startSeq, lastChecksum, lastTimeUs, (rec) => {
    const format5 = rec.seq >= format5From;
    digests.begin(format5);
    exchange.setEventsInAnswers(format5);
    exchange.setTakerSummary(rec.seq >= format6From);
    exchange.apply(rec.command, rec.seq, rec.timeUs, digests.sink);
    return digests.finish();
  }, (seq) => {
    checkCleanStop(seq);
    moveOnAfter(seq);
  });
  const { lastSeq, replayed } = replay;
  ({ lastChecksum, lastTimeUs } = replay);
  // The clean stop was recorded at a sequence the journal no longer reaches: its tail is gone.
  if (cleanStop !== null && cleanStop.seq > lastSeq) {
    throw new JournalGapError(`the journal ends at sequence ${lastSeq}, but the server stopped cleanly at ${cleanStop.seq}`);
  }
  if (era < changes.length) throw new JournalGapError(`the journal ends at sequence ${lastSeq}, before the configuration change it records after ${changes[era].seq}`);
  if (gained) recordConfigChange(store, changes, fingerprint);
  // Whatever the journal's past, what this engine journals from here on is of format 6.
  exchange.setEventsInAnswers(true);
  exchange.setTakerSummary(true);
  return { exchange, lastSeq, lastChecksum, lastTimeUs, snapshotSeq, replayed, skippedSnapshots, configGainedMarginAt: gained ? changes[changes.length - 1].seq : null };
}

/**
 * The first sequence written under a later format, stored under meta `key` (journal-layout.ts
 * RUN_CHECKSUMS_FROM_KEY, FORMAT_5_FROM_KEY, FORMAT_6_FROM_KEY; 1 when unset); `what` names those records.
 */
function formatFrom(store: JournalStore, key: string, what: string): number {
  const text = store.getMeta(key);
  if (text === undefined) return 1;
  const from = /^[1-9][0-9]{0,15}$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(from)) throw new JournalFormatError(`the journal's ${key} is ${JSON.stringify(text)}, not a sequence: where its ${what} begin is unknown`);
  return from;
}

/**
 * Replays the records from `startSeq`: each stored run decoded in place, its checksum checked
 * before any of its records is applied (format 4; formats 2 and 3: each record's, as it is read),
 * each record checked for contiguity (readRecord), applied by `apply` (which returns its output
 * digest, compared with the stored one) and then handed to `after`. The run holding `startSeq` may
 * begin before it (a snapshot inside a run): a run of format 4 is then checked whole, chained from
 * the seed it stores, and a run of format 3 from its record at `startSeq`, chained from `checksum`.
 */
function replayRecords(
  store: JournalStore, startSeq: number, checksum: number, timeUs: number,
  apply: (rec: StampedRec) => number, after: (seq: number) => void,
): { lastSeq: number; lastChecksum: number; lastTimeUs: number; replayed: number } {
  const rec = newStampedRec();
  const sealedFrom = formatFrom(store, RUN_CHECKSUMS_FROM_KEY, 'runs of format 4');
  let lastSeq = startSeq - 1;
  let lastChecksum = checksum;
  let lastTimeUs = timeUs;
  for (const { seq: runSeq, value } of store.runs(startSeq)) {
    if (value.length === 0 || value.length % JOURNAL_RECORD_BYTES !== 0) {
      throw new JournalRecordSizeError(`journal records from ${runSeq}: the stored value has ${value.length} bytes, not a whole number of ${JOURNAL_RECORD_BYTES}-byte records`);
    }
    const view = new DataView(value.buffer, value.byteOffset, value.length);
    const sealed = runSeq >= sealedFrom;
    const first = Math.max(runSeq, startSeq);
    if (sealed) lastChecksum = checkRun(value, view, runSeq, lastSeq, runSeq < startSeq ? runSeed(value) : lastChecksum);
    for (let at = (first - runSeq) * JOURNAL_RECORD_BYTES, seq = first; at < value.length; at += JOURNAL_RECORD_BYTES, seq++) {
      if (sealed) readRecord(view, at, seq, lastSeq, rec);
      else lastChecksum = readChainedRecord(view, at, seq, lastSeq, lastChecksum, rec);
      const digest = apply(rec);
      const storedDigest = view.getUint32(at + JOURNAL_DIGEST_OFFSET, true);
      if (digest !== storedDigest) {
        throw new JournalOutputDigestError(`journal record ${seq}: replayed outputs digest to ${digest}, the live engine's to ${storedDigest}`);
      }
      lastSeq = seq;
      lastTimeUs = rec.timeUs;
      after(seq);
    }
  }
  return { lastSeq, lastChecksum, lastTimeUs, replayed: lastSeq - startSeq + 1 };
}

/**
 * Checks a run of format 4 whole (journal-layout.ts sealRun; `view` over its bytes), chained from `seed`, before any of
 * its records is applied; returns its checksum. A run that starts replay must follow the record
 * replay last applied (the decision table's gap, as readRecord checks each record).
 */
function checkRun(value: Uint8Array, view: DataView, runSeq: number, lastSeq: number, seed: number): number {
  const count = value.length / JOURNAL_RECORD_BYTES;
  if (runSeq > lastSeq + 1) throw new JournalGapError(`journal sequence jumps from ${lastSeq} to ${runSeq}`);
  const expected = runChecksum(value, count, seed);
  const stored = view.getUint32(value.length - 4, true);
  const what = count === 1 ? `journal record ${runSeq}` : `journal records ${runSeq}–${runSeq + count - 1}`;
  if (stored !== expected) throw new JournalChecksumError(`${what}: checksum ${stored} does not chain (expected ${expected})`);
  return stored;
}

/** Journal record `seq`, at `at` of a run, read into `rec` after checking its contiguity (the decision table). */
function readRecord(view: DataView, at: number, seq: number, lastSeq: number, rec: StampedRec): void {
  if (seq !== lastSeq + 1) throw new JournalGapError(`journal sequence jumps from ${lastSeq} to ${seq}`);
  readStamped(view, at, rec);
  if (rec.seq !== seq) throw new JournalChecksumError(`journal record under key ${seq} holds sequence ${rec.seq}`);
}

/**
 * Journal record `seq` of format 2 or 3, at `at` of a run, read into `rec` after checking its
 * contiguity and its own checksum's chain (the decision table); returns its checksum.
 */
function readChainedRecord(view: DataView, at: number, seq: number, lastSeq: number, lastChecksum: number, rec: StampedRec): number {
  if (seq !== lastSeq + 1) throw new JournalGapError(`journal sequence jumps from ${lastSeq} to ${seq}`);
  const expected = recordChecksum(view, at, lastChecksum);
  const stored = view.getUint32(at + JOURNAL_CHECKSUM_OFFSET, true);
  if (stored !== expected) throw new JournalChecksumError(`journal record ${seq}: checksum ${stored} does not chain (expected ${expected})`);
  readRecord(view, at, seq, lastSeq, rec);
  return stored;
}

/**
 * Records an accepted configuration change, the last of `changes`: first the chain with it (with
 * the previous fingerprint), then the new fingerprint, so that a stop between the two leaves the
 * previous fingerprint in place, readConfigChanges leaves the change out, and the next start
 * accepts it again.
 */
function recordConfigChange(store: JournalStore, changes: readonly ConfigChange[], fingerprint: string): void {
  const [key, value] = configChangesMeta(changes);
  store.putMetaSync(key, value);
  store.putMetaSync(CONFIG_KEY, fingerprint);
}
