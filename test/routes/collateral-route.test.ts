// GET /api/v1/collateral over real HTTP: the configured collateral parameters in the venue's wire
// shape, by value (the default assets), read through ccxt's implicit method as well, and a
// markets file's own parameters (an asset without them is absent) after a restart on it.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_MARKETS } from '../../src/config.js';
import { get, removeDir, startServer, tempDataDir } from '../helpers/server.js';
import { ccxtRest } from '../helpers/ccxt.js';

const SERVER_ARGS = ['--no-demo', '--front-threads', '1'];

const VOLATILE = {
  imfFunction: { type: 'sqrt', base: '0.2', factor: '0.0001275' },
  mmfFunction: { type: 'sqrt', base: '0.125', factor: '0.0000765' },
};

const DEFAULT_COLLATERAL = [
  {
    symbol: 'USDC',
    imfFunction: { type: 'sqrt', base: '0.1', factor: '0.0001275' },
    mmfFunction: { type: 'sqrt', base: '0.0625', factor: '0.0000765' },
    haircutFunction: { weight: '1', kind: { type: 'identity' } },
  },
  { symbol: 'SOL', ...VOLATILE, haircutFunction: { weight: '0.85', kind: { type: 'inverseSqrt', base: '1.1', positiveCurvePenalty: '0.0003' } } },
  { symbol: 'BTC', ...VOLATILE, haircutFunction: { weight: '0.9', kind: { type: 'inverseSqrt', base: '1.1', positiveCurvePenalty: '0.007' } } },
  { symbol: 'ETH', ...VOLATILE, haircutFunction: { weight: '0.9', kind: { type: 'inverseSqrt', base: '1.1', positiveCurvePenalty: '0.0015' } } },
];

describe('GET /api/v1/collateral', () => {
  const dataDir = tempDataDir();
  const otherDataDir = tempDataDir();
  const fileDir = mkdtempSync(join(tmpdir(), 'collateral-route-'));
  afterAll(() => {
    removeDir(dataDir);
    removeDir(otherDataDir);
    rmSync(fileDir, { recursive: true, force: true });
  });

  it('serves the default parameters in the wire shape, to ccxt too', async () => {
    const server = await startServer({ dataDir, args: SERVER_ARGS });
    try {
      const response = await get(server.base, '/api/v1/collateral');
      expect(response.status).toBe(200);
      expect(response.body).toEqual(DEFAULT_COLLATERAL);
      // Key order as the venue writes it.
      expect(Object.keys((response.body as object[])[0])).toEqual(['symbol', 'imfFunction', 'mmfFunction', 'haircutFunction']);
      const exchange = ccxtRest(server) as unknown as { publicGetApiV1Collateral: () => Promise<unknown> };
      expect(await exchange.publicGetApiV1Collateral()).toEqual(DEFAULT_COLLATERAL);
    } finally {
      await server.stop();
    }
  });

  it("serves a markets file's parameters, in canonical decimals, and leaves out assets without them", async () => {
    const [usdc, sol] = DEFAULT_MARKETS.assets;
    const custom = {
      ...sol,
      collateral: {
        imfFunction: { type: 'sqrt', base: '0.050', factor: '0.000000000001' },
        mmfFunction: { type: 'sqrt', base: '0.03', factor: '0' },
        haircutFunction: { weight: '0.500000', kind: { type: 'inverseSqrt', base: '2', positiveCurvePenalty: '0.5' } },
        haircutBasis: 'notional',
      },
      borrowLend: undefined,
    };
    const file = join(fileDir, 'markets.json');
    const { borrowLend: _b, collateral: _c, ...usdcBare } = usdc;
    writeFileSync(file, JSON.stringify({ assets: [usdcBare, custom], markets: [DEFAULT_MARKETS.markets[0]] }));
    const server = await startServer({ dataDir: otherDataDir, args: [...SERVER_ARGS, '--config', file] });
    try {
      const response = await get(server.base, '/api/v1/collateral');
      expect(response.body).toEqual([{
        symbol: 'SOL',
        imfFunction: { type: 'sqrt', base: '0.05', factor: '0.000000000001' },
        mmfFunction: { type: 'sqrt', base: '0.03', factor: '0' },
        haircutFunction: { weight: '0.5', kind: { type: 'inverseSqrt', base: '2', positiveCurvePenalty: '0.5' } },
      }]);
    } finally {
      await server.stop();
    }
  });
});
