// The simulated chain: confirms withdrawals. There is no blockchain behind this server, so a
// withdrawal's on-chain life is simulated: CONFIRM_DELAY_MS after it was accepted, front thread
// 0 submits a ConfirmWithdrawal command for it. The command is journaled like any other, so the
// pending → confirmed transition is part of the sequenced history (the journal worker applies it
// to the history record in the journal's transaction) and a replay or restart cannot disagree
// with what clients saw. After a restart the work list is read back from LMDB (withdrawals still
// pending), so nothing is lost; a confirmation submitted twice is harmless (the second finds the
// withdrawal already confirmed and changes nothing).

import type { FrontContext } from './context.js';
import { confirmWithdrawal } from './engine-calls/index.js';

export const CONFIRM_DELAY_MS = 1000;
const POLL_MS = 250;

export function startSimulatedChain(front: FrontContext): () => void {
  const inFlight = new Set<number>();
  const poll = (): void => {
    const dueUs = (Date.now() - CONFIRM_DELAY_MS) * 1000;
    for (const [id, accountId, timeUs] of front.accountHistory.pendingWithdrawals()) {
      if (timeUs > dueUs || inFlight.has(id)) continue;
      const submitted = confirmWithdrawal(front.link, accountId, id, () => inFlight.delete(id));
      if (submitted === 'ok') inFlight.add(id);
    }
  };
  const timer = setInterval(() => {
    try {
      poll();
    } catch (error) {
      front.log.error({ err: error }, 'simulated chain poll failed');
    }
  }, POLL_MS);
  return () => clearInterval(timer);
}
