// A seeded random command stream run through the engine shell's write side in-process: a live
// Exchange and Sequencer publishing into an outbound ring, as the engine worker does, for tests
// that feed the journal writer the records the engine really writes.

import { Exchange } from '../../engine/core/exchange.js';
import { SLOT_BYTES, commandFromSlot } from '../../engine/bus/codec.js';
import { OutboundRing } from '../../engine/bus/ring.js';
import { CommandKind, type EngineConfig } from '../../engine/bus/types.js';
import { Sequencer } from '../../engine/shell/sequencer.js';
import { EngineHarness } from './engine-harness.js';
import { runRandomStream } from './engine-random.js';

/**
 * Runs `commands` steps of the random stream of `seed` on a fresh engine: every outbound record is
 * handed to `onRecord` (ring and offset) in ring order, and `afterStep` runs after each step's
 * records (`last` on the final one). Queries are answered unsequenced. The commands before
 * sequence `eventsInAnswersFrom` write the orders' events apart from their answers, as an engine
 * of journal format 4 or before did (engine/core/output.ts eventsInAnswers), and those before
 * `takerSummaryFrom` (by default the same) write a taker's balances and fills after each of its
 * fills, as an engine of format 5 or before did (takerSummary). Returns the engine and the last
 * sequence it applied.
 */
export async function sequenceRandomStream(
  config: EngineConfig,
  seed: number,
  commands: number,
  onRecord: (ring: OutboundRing, offset: number) => void,
  afterStep: (index: number, last: boolean) => Promise<void>,
  eventsInAnswersFrom = 1,
  takerSummaryFrom = eventsInAnswersFrom,
): Promise<{ exchange: Exchange; seq: number }> {
  const harness = new EngineHarness(config);
  harness.checks = false;
  runRandomStream(harness, seed, commands);
  const exchange = new Exchange(config);
  const ring = OutboundRing.create({ slotCount: 1 << 14, slotBytes: SLOT_BYTES, consumerCount: 1 });
  const consumer = ring.consumer(0);
  const sequencer = new Sequencer(exchange, ring, () => ring.tryClaim());
  let seq = 0;
  for (const [i, stamped] of harness.stream.entries()) {
    const command = commandFromSlot(stamped.command);
    exchange.setEventsInAnswers(seq + 1 >= eventsInAnswersFrom);
    exchange.setTakerSummary(seq + 1 >= takerSummaryFrom);
    if (command.kind >= CommandKind.QueryBalances) sequencer.query(command, seq, stamped.timeUs);
    else sequencer.command(++seq, stamped.timeUs, command, null, 0);
    ring.flush();
    consumer.poll((offset) => {
      onRecord(ring, offset);
      return true;
    }, 1 << 20);
    await afterStep(i, i === harness.stream.length - 1);
  }
  return { exchange, seq };
}
