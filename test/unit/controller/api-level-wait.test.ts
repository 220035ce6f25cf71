// A controller on a cluster whose CRDs mix API levels (docs/behaviour.md §16.2): one error line
// naming each CRD's level, /readyz false, the metric at 0, no caches built (only the CRDs are read),
// and no crash; it gives up only when told to.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crownlabsCrdsDir, LEVEL_MARKS } from '../../../src/inputs/api-level.ts';
import { defaultConfig } from '../../../src/config/config.ts';
import { startController } from '../../../src/controller/controller.ts';
import { freePort } from '../../support/free-port.ts';

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** The e62be9e CRDs with Instances' at 2e8aeb9. */
function mixedCrds(): unknown[] {
  return LEVEL_MARKS.map((m) => {
    const level = m.crd === 'instances.crownlabs.polito.it' ? '2e8aeb9' : 'e62be9e';
    return parse(readFileSync(join(crownlabsCrdsDir(level), `crownlabs.polito.it_${m.crd.split('.')[0]}.yaml`), 'utf8'));
  });
}

describe('controller start on CRDs of mixed levels', () => {
  let api: http.Server;
  const paths: string[] = [];
  let kubeConfig: KubeConfig;
  beforeAll(async () => {
    const items = mixedCrds();
    api = http.createServer((req, res) => {
      const url = new URL(req.url ?? '', 'http://x');
      paths.push(url.pathname);
      if (url.pathname !== CRD_PATH) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"kind":"Status","code":404}');
      if (url.searchParams.get('watch')) return void res.writeHead(200, { 'content-type': 'application/json' }); // stays open, no events
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '7' }, items }));
    });
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'fake', server: `http://127.0.0.1:${(api.address() as AddressInfo).port}`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'c', cluster: 'fake', user: 'u' }],
      currentContext: 'c',
    });
  });
  afterAll(() => {
    api.closeAllConnections();
    return new Promise<void>((r) => api.close(() => r()));
  });

  it('logs one line naming each CRD with its level, is not ready, reconciles nothing, and stops when aborted', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, new Writable({ write: (c, _e, cb) => (lines.push(...String(c).trim().split('\n').map((l) => JSON.parse(l))), cb()) }));
    const abort = new AbortController();
    const port = await freePort();
    const started = startController({ kubeConfig, config: defaultConfig(), logger, metricsAddr: '', healthProbeAddr: `127.0.0.1:${port}`, signal: abort.signal });
    const outcome = started.then(
      () => 'started',
      (e: Error) => e.message,
    );
    for (let i = 0; i < 100 && !lines.some((l) => l.level === 50); i++) await new Promise((r) => setTimeout(r, 30));
    const errors = lines.filter((l) => (l.level as number) >= 50);
    expect(errors).toHaveLength(1);
    expect(errors[0].msg).toBe(
      'the installed CrownLabs CRDs mix API levels: templates.crownlabs.polito.it at e62be9e, instances.crownlabs.polito.it at 2e8aeb9, tenants.crownlabs.polito.it at e62be9e, workspaces.crownlabs.polito.it at e62be9e, imagelists.crownlabs.polito.it at e62be9e: not reconciling until they agree',
    );
    expect(JSON.stringify(errors[0])).not.toMatch(/stack|at .*\.ts:\d+/);
    // Nothing but the CRDs was asked for: no informer of the inputs started.
    expect(new Set(paths)).toEqual(new Set([CRD_PATH]));
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(503);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect(await Promise.race([outcome, new Promise((r) => setTimeout(() => r('waiting'), 50))])).toBe('waiting');
    abort.abort();
    expect(await outcome).toBe('stopped while waiting for the CRDs to show one API level');
    expect(lines.filter((l) => (l.level as number) >= 50)).toHaveLength(1);
  });
});
