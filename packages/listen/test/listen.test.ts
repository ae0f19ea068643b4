// `guard listen` and `guard trigger` as a developer runs them: the CLI as a child process
// (src/bin.ts on the repository's Node), the real guard-server in-process on loopback
// (SQLite, or PostgreSQL under scripts/test-postgres.ts), and a real HTTP receiver on
// loopback that checks each forward with the receiver SDK and the standardwebhooks package.
//
// "Never arrives" is shown by order, not by waiting: the server sends a tenant's events in
// the order they were received and the CLI forwards them in the order they arrive, so once a
// later event has reached the receiver an earlier one that was going to has too (the clock
// moves a millisecond between the two so that their order is certain).

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { constructEvent } from '@guard/webhooks';
import { Webhook } from 'standardwebhooks';
import { api, type Loose } from '../../server/test/harness.ts';
import { freePort, makeTestTls, type TestTls } from '../../server/test/loopback.ts';
import { databaseFlags, dropTestDatabase, ON_POSTGRES } from '../../server/test/test-database.ts';
import {
  addUserToken,
  createSignal,
  newTenant,
  startWebhookServer,
  type Tenant,
  type WebhookServer,
} from '../../server/test/webhook-harness.ts';
import { Cli, CuttableProxy, LocalReceiver } from './cli-harness.ts';

/** Starts `guard listen`, and waits until it is connected; resolves with it and its session secret. */
async function listen(server: { url: string }, token: string, receiver: LocalReceiver, extra: string[] = []) {
  const cli = new Cli(['listen', '--url', server.url, '--forward-to', receiver.url(), ...extra], {
    GUARD_TOKEN: token,
  });
  const [, secret] = await cli.line('err', /^Signing secret for this session: (whsec_\S+)$/);
  await cli.line('err', /^Ready: tenant /);
  return { cli, secret };
}

const eventLine = (event: string, id: string, status: string) =>
  new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z  ${event}  ${id}  ${status}  \\d+ ms$`);

// ---------------------------------------------------------------------------------------

describe('guard listen', () => {
  let tls: TestTls;
  let server: WebhookServer;
  let a: Tenant;
  let b: Tenant;
  let receiver: LocalReceiver;
  const running: Cli[] = [];

  before(async () => {
    tls = await makeTestTls();
    server = await startWebhookServer({ caPem: tls.caPem });
    a = await newTenant(server);
    b = await newTenant(server);
  });
  after(async () => {
    for (const c of running) c.child.kill('SIGKILL');
    await server.close();
  });

  it('forwards each new event to the local URL signed as a delivery with the session secret, prints a line for each, and exits 0 on Ctrl-C', async () => {
    receiver = await LocalReceiver.start();
    try {
      const { cli, secret } = await listen(server, a.adminToken, receiver);
      running.push(cli);
      assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);

      const s = await createSignal(server, a.agentKey, { severity: 5 });
      const hit = await receiver.waitFor(s.signal_id);
      assert.equal(hit.path, '/webhook');
      const event = constructEvent(hit.body, hit.headers, secret);
      assert.equal(event.data.signal_id, s.signal_id);
      assert.equal(event.data.severity, 5);
      assert.equal(event.tenant_id, a.tenantId);
      assert.deepEqual(
        new Webhook(secret).verify(hit.body, hit.headers as Record<string, string>),
        JSON.parse(hit.body),
      );
      assert.equal(hit.headers['guard-event'], 'signal_created');
      assert.equal(hit.headers['user-agent'], 'Guard-Webhook/1.0');
      assert.equal(hit.headers['content-type'], 'application/json');
      assert.match(String(hit.headers['guard-delivery']), /^[0-9a-f-]{36}$/);
      assert.equal(hit.headers['webhook-id'], hit.headers['guard-delivery']);
      assert.equal(hit.headers['webhook-timestamp'], hit.headers['guard-timestamp']);
      assert.ok(Math.abs(Number(hit.headers['guard-timestamp']) - Date.now() / 1000) < 60);
      await cli.line('out', eventLine('signal_created', s.signal_id, '200'));

      // guard trigger: its event arrives too; the receiver's answer is what the line shows.
      receiver.status = 503;
      const triggered = await Cli.run(['trigger', 'signal_created', '--url', server.url, '--severity', '2'], {
        GUARD_TOKEN: a.adminToken,
      });
      assert.equal(triggered.code, 0, triggered.err);
      const [, id] = /^triggered signal_created (sig_\w+)$/.exec(triggered.out) ?? [];
      assert.ok(id, triggered.out);
      const tHit = await receiver.waitFor(id);
      const tEvent = constructEvent(tHit.body, tHit.headers, secret);
      assert.equal(tEvent.data.signal_type, 'test_event');
      assert.equal(tEvent.data.severity, 2);
      await cli.line('out', eventLine('signal_created', id, '503'));

      assert.equal(await cli.interrupt(), 0);
      assert.ok(cli.err.includes('Stopped.'), cli.err.join('\n'));
      assert.deepEqual(receiver.ids(), [s.signal_id, id]);
    } finally {
      await receiver.close();
    }
  });

  it('forwards only the event types --events names', async () => {
    receiver = await LocalReceiver.start();
    try {
      const { cli } = await listen(server, a.adminToken, receiver, ['--events', 'test']);
      running.push(cli);
      const real = await createSignal(server, a.agentKey);
      server.clock.advance(1);
      const res = await api(server.url, 'POST', '/v1/webhooks/listen/trigger', {
        token: a.adminToken,
        body: { event_type: 'signal_created' },
      });
      await receiver.waitFor(res.json.signal_id);
      assert.deepEqual(receiver.ids(), [res.json.signal_id]);
      assert.ok(!cli.out.some((l) => l.includes(real.signal_id)));
      assert.equal(await cli.interrupt(), 0);
    } finally {
      await receiver.close();
    }
  });

  it("never forwards another tenant's events", async () => {
    receiver = await LocalReceiver.start();
    try {
      const { cli } = await listen(server, a.adminToken, receiver);
      running.push(cli);
      await createSignal(server, b.agentKey);
      server.clock.advance(1);
      const ours = await createSignal(server, a.agentKey);
      await receiver.waitFor(ours.signal_id);
      assert.deepEqual(receiver.ids(), [ours.signal_id]);
      for (const hit of receiver.hits) assert.equal(JSON.parse(hit.body).tenant_id, a.tenantId);
      assert.equal(await cli.interrupt(), 0);
    } finally {
      await receiver.close();
    }
  });

  it('prints a receiver that cannot be reached as an error and goes on; without --forward-to it only prints', async () => {
    const t = await newTenant(server);
    const port = await freePort();
    const down = new Cli(['listen', '--url', server.url, '--forward-to', `http://127.0.0.1:${port}/webhook`], {
      GUARD_TOKEN: t.adminToken,
    });
    const printing = new Cli(['listen', '--url', server.url], { GUARD_TOKEN: t.adminToken });
    running.push(down, printing);
    await down.line('err', /^Ready: /);
    const [ready] = await printing.line('err', /^Ready: .*printing only \(no --forward-to\)/);
    assert.ok(ready);
    const first = await createSignal(server, t.agentKey);
    const second = await createSignal(server, t.agentKey);
    await down.line('out', eventLine('signal_created', first.signal_id, 'error ECONNREFUSED'));
    await down.line('out', eventLine('signal_created', second.signal_id, 'error ECONNREFUSED'));
    await printing.line('out', new RegExp(`  signal_created  ${second.signal_id}  not forwarded$`));
    assert.equal(await down.interrupt(), 0);
    assert.equal(await printing.interrupt(), 0);
  });

  it('reconnects after the stream drops and resumes where it left off: nothing lost, nothing twice', async () => {
    receiver = await LocalReceiver.start();
    const proxy = await CuttableProxy.start(server.url);
    try {
      const t = await newTenant(server);
      const { cli } = await listen({ url: proxy.url }, t.adminToken, receiver);
      running.push(cli);
      const s1 = await createSignal(server, t.agentKey);
      await receiver.waitFor(s1.signal_id);

      proxy.down();
      await cli.line('err', /^Stream lost \(.*\); reconnecting in [\d.]+ s$/);
      // Made while the CLI is cut off (straight to the server, not through the proxy).
      const s2 = await createSignal(server, t.agentKey);
      const s3 = await createSignal(server, t.agentKey);
      proxy.up();
      await cli.line('err', new RegExp(`^Reconnected \\(resuming after ${s1.signal_id}\\)$`));
      await receiver.waitFor(s3.signal_id);
      const s4 = await createSignal(server, t.agentKey);
      await receiver.waitFor(s4.signal_id);
      assert.deepEqual(receiver.ids(), [s1.signal_id, s2.signal_id, s3.signal_id, s4.signal_id]);
      assert.equal(await cli.interrupt(), 0);
    } finally {
      await proxy.close();
      await receiver.close();
    }
  });

  it('comes back after the server restarts (bye: shutdown), and resumes', async () => {
    receiver = await LocalReceiver.start();
    const port = await freePort();
    const dataDir = await mkdtemp(join(os.tmpdir(), 'guard-listen-restart-'));
    const flags = { listen: `127.0.0.1:${port}` };
    let second: WebhookServer | undefined;
    try {
      const first = await startWebhookServer({ caPem: tls.caPem, dataDir, flags });
      const t = await newTenant(first);
      const { cli } = await listen(first, t.adminToken, receiver);
      running.push(cli);
      const s1 = await createSignal(first, t.agentKey);
      await receiver.waitFor(s1.signal_id);
      await first.close(); // a data dir it was given stays, with its database
      await cli.line('err', /^Stream lost \(the server ended the stream: shutdown/);
      second = await startWebhookServer({ caPem: tls.caPem, dataDir, flags });
      const s2 = await createSignal(second, t.agentKey);
      await receiver.waitFor(s2.signal_id);
      await cli.line('err', /^Reconnected/);
      assert.deepEqual(receiver.ids(), [s1.signal_id, s2.signal_id]);
      assert.equal(await cli.interrupt(), 0);
    } finally {
      await second?.close();
      await dropTestDatabase(dataDir);
      await rm(dataDir, { recursive: true, force: true });
      await receiver.close();
    }
  });

  it('exits 3 when the server refuses the token (401) or its user may not listen (403)', async () => {
    const unknown = await Cli.run(['listen', '--url', server.url, '--token', 'gut_not_a_token_we_issued']);
    assert.equal(unknown.code, 3);
    assert.match(unknown.err, /^guard: the server refused the token \(401 unauthorized: /m);
    const member = await addUserToken(server, a.tenantId, 'member');
    const refused = await Cli.run(['listen', '--url', server.url], { GUARD_TOKEN: member });
    assert.equal(refused.code, 3);
    assert.match(refused.err, /^guard: the token may not listen \(403 forbidden: .*admin/m);
    const trigger = await Cli.run(['trigger', 'signal_created', '--url', server.url, '--token', member]);
    assert.equal(trigger.code, 3);
    assert.match(trigger.err, /403/);
  });

  it('exits 4 when the server cannot be reached, naming the cause', async () => {
    const port = await freePort();
    const r = await Cli.run(['listen', '--url', `http://127.0.0.1:${port}`, '--token', a.adminToken]);
    assert.equal(r.code, 4);
    assert.match(r.err, new RegExp(`^guard: cannot reach http://127\\.0\\.0\\.1:${port}: ECONNREFUSED`, 'm'));
  });

  it('exits 2 on a bad URL, event type, secret or missing flag, before sending anything', async () => {
    const cases: [string[], RegExp][] = [
      [['listen', '--url', 'guard.example.com', '--token', a.adminToken], /--url "guard\.example\.com" is not a URL/],
      [
        ['listen', '--url', 'ftp://guard.example.com', '--token', a.adminToken],
        /--url must be an http:\/\/ or https:\/\/ URL/,
      ],
      [
        ['listen', '--url', server.url, '--token', a.adminToken, '--forward-to', 'localhost:3000'],
        /--forward-to must be an http:\/\/ or https:\/\/ URL \(for example http:\/\/localhost:3000\/webhook\), not "localhost:3000"/,
      ],
      [
        ['listen', '--url', server.url, '--token', a.adminToken, '--events', 'signal_created,nope'],
        /--events: unknown event type nope/,
      ],
      [
        ['listen', '--url', server.url, '--token', a.adminToken, '--secret', 'abc'],
        /--secret: a secret starts with whsec_/,
      ],
      [['listen', '--token', a.adminToken], /give the server with --url/],
      [['listen', '--url', server.url], /give a user API token with --token/],
      [
        ['trigger', 'endpoint.failing', '--url', server.url, '--token', a.adminToken],
        /cannot trigger "endpoint\.failing"/,
      ],
      [
        ['trigger', 'signal_created', '--url', server.url, '--token', a.adminToken, '--severity', '7'],
        /severity is an integer from 1 to 5/,
      ],
      [['listne'], /unknown command 'listne'/],
    ];
    for (const [args, message] of cases) {
      const r = await Cli.run(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
      assert.match(r.err, message, args.join(' '));
    }
  });

  it('--help describes both commands and their exit codes', async () => {
    const top = await Cli.run(['--help']);
    assert.equal(top.code, 0);
    assert.match(top.out, /listen \[options\]/);
    assert.match(top.out, /trigger \[options\] <event>/);
    const help = await Cli.run(['listen', '--help']);
    assert.equal(help.code, 0);
    for (const flag of ['--url', '--token', '--forward-to', '--events', '--secret', 'GUARD_TOKEN', 'Exit codes'])
      assert.ok(help.out.includes(flag), flag);
  });
});

describe('guard listen on two replicas sharing PostgreSQL', { skip: !ON_POSTGRES && 'PostgreSQL pass only' }, () => {
  it('forwards an event created on one replica from a stream held by the other', async () => {
    const tls = await makeTestTls();
    const one = await startWebhookServer({ caPem: tls.caPem });
    const database = await databaseFlags(one.dataDir);
    const two = await startWebhookServer({ caPem: tls.caPem, flags: { database: String(database.database) } });
    const receiver = await LocalReceiver.start();
    let cli: Cli | undefined;
    try {
      const t = await newTenant(one);
      ({ cli } = await listen(two, t.adminToken, receiver));
      const s = await createSignal(one, t.agentKey);
      const res = (await api(one.url, 'POST', '/v1/webhooks/listen/trigger', {
        token: t.adminToken,
        body: { event_type: 'signal_created' },
      })) as { json: Loose };
      await receiver.waitFor(res.json.signal_id);
      assert.deepEqual(receiver.ids(), [s.signal_id, res.json.signal_id]);
      assert.equal(await cli.interrupt(), 0);
    } finally {
      cli?.child.kill('SIGKILL');
      await receiver.close();
      await two.close();
      await one.close();
    }
  });
});
