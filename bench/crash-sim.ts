// The long run of the market-crash simulation (test/helpers/crash-sim.ts): thousands of accounts
// and more rounds than the CI test, every check on. `npm run sim:crash` (builds first), or
// `node dist/bench/crash-sim.js [--seed N] [--accounts N] [--rounds N]`; CRASH_SEED sets the seed
// too. Prints what the run reached as JSON; a failed check exits 1 with its seed.
import { pathToFileURL } from 'node:url';
import { CrashCheckError, runCrashSim } from '../test/helpers/crash-sim.js';

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  const text = at >= 0 ? process.argv[at + 1] : undefined;
  const value = Number(text ?? fallback);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`--${name} must be a positive integer`);
  return value;
}

function main(): void {
  const seed = flag('seed', Number(process.env.CRASH_SEED ?? 1));
  const accounts = flag('accounts', 3_000);
  const rounds = flag('rounds', 400);
  const started = process.hrtime.bigint();
  try {
    const report = runCrashSim({ seed, accounts, rounds, actionsPerRound: Math.max(12, Math.floor(accounts / 50)) });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    console.log(JSON.stringify({ ...report, accounts, rounds, seconds: Math.round(seconds * 10) / 10 }, null, 1));
  } catch (error) {
    if (!(error instanceof CrashCheckError)) throw error;
    console.error(error.message);
    process.exitCode = 1;
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main();
