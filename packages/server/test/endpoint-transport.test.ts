// How deliveries reach receivers that ask for more than HTTPS (issue 21, items 2 to 4; DESIGN
// §5 contract — endpoint TLS), against real parts on loopback: receivers that demand a client
// certificate from their own CA (mTLS), a receiver on a private PKI the server does not trust,
// HTTP Basic, OAuth2 client credentials from a real authorization server (panva's
// oidc-provider, served over HTTPS), and an HTTP CONNECT proxy that every delivery tunnels
// through. Certificates are made with openssl at test start.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { constructGuardEvent } from '@guard/webhooks';
import { Provider } from 'oidc-provider';
import { announceExpiringCertificates } from '../src/webhooks/index.ts';
import { waitForDeliveriesMade } from './delivery-waits.ts';
import type { Loose } from './harness.ts';
import { makeClientCertificate } from './loopback.ts';
import {
  apiCall,
  createEndpoint,
  createSignal,
  makeTestTls,
  newTenant,
  Receiver,
  startWebhookServer,
  type Tenant,
  type TestTls,
  type WebhookServer,
  waitForDelivery,
} from './webhook-harness.ts';

function assertError(res: { status: number; json: Loose; text: string }, status: number, code: string) {
  assert.equal(res.status, status, res.text);
  assert.equal(res.json.error.code, code, res.text);
}

let unique = 0;
const path = (label: string) => `/${label}-${++unique}`;

/** A new signal's delivery to `endpointId`, once `until` holds. */
async function deliverOne(
  server: WebhookServer,
  t: Tenant,
  endpointId: string,
  until: (d: Loose) => boolean,
  what: string,
) {
  const created = await createSignal(server, t.agentKey);
  const list = await apiCall(server, 'GET', `/v1/signals/${created.signal_id}/deliveries`, t.adminToken);
  const id = list.json.deliveries.find((d: Loose) => d.endpoint_id === endpointId)?.delivery_id as string;
  assert.ok(id, `no delivery to ${endpointId}: ${list.text}`);
  return waitForDelivery(server, t.adminToken, id, until, what);
}

let tls: TestTls;
let server: WebhookServer;

before(async () => {
  tls = await makeTestTls();
  server = await startWebhookServer({ caPem: tls.caPem });
});

after(async () => {
  await server?.close();
});

describe('endpoint TLS: a client certificate (mTLS)', () => {
  let client: { caPem: string; cert: string; key: string };
  let receiver: Receiver;
  let t: Tenant;

  before(async () => {
    client = await makeClientCertificate('guard-deliveries.example');
    // The receiver refuses any connection without a client certificate its own CA signed.
    receiver = await Receiver.start({ ...tls, requestCert: true, rejectUnauthorized: true, ca: client.caPem });
  });
  beforeEach(async () => {
    t = await newTenant(server);
  });
  after(() => receiver?.close());

  it('presents the certificate when the receiver asks for one; without it the handshake fails', async () => {
    const p = path('mtls');
    const bare = await createEndpoint(server, t.adminToken, { url: receiver.url(p) });
    const failed = await deliverOne(server, t, bare.id, (d) => d.attempts >= 1, 'an attempt without a certificate');
    assert.equal(failed.state === 'succeeded', false);
    assert.equal(receiver.hitsFor(p).length, 0);
    await apiCall(server, 'DELETE', `/v1/webhooks/endpoints/${bare.id}`, t.adminToken);

    const e = await createEndpoint(server, t.adminToken, {
      url: receiver.url(p),
      tls_client_certificate: client.cert,
      tls_client_key: client.key,
    });
    await deliverOne(server, t, e.id, (d) => d.state === 'succeeded', 'a delivery with the certificate');
    const [hit] = await receiver.waitForHits(p, 1);
    assert.equal(hit.clientCertificateCn, 'guard-deliveries.example');

    const shown = await apiCall(server, 'GET', `/v1/webhooks/endpoints/${e.id}`, t.adminToken);
    const c = shown.json.tls.client_certificate;
    assert.match(c.subject, /CN=guard-deliveries\.example/);
    assert.match(c.issuer, /CN=Receiver client CA/);
    assert.ok(Date.parse(c.not_after) > Date.now() + 29 * 86_400_000, c.not_after);
    assert.match(c.fingerprint_sha256, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    assert.equal(shown.json.tls.ca_certificates, null);
    assert.ok(!shown.text.includes('PRIVATE KEY'), 'the key is never returned');
    const row = await server.deps.db
      .selectFrom('webhook_endpoints')
      .select(['tls_client_key_sealed'])
      .where('id', '=', e.id)
      .executeTakeFirstOrThrow();
    assert.match(row.tls_client_key_sealed ?? '', /^v1\./, 'stored sealed');
    assert.ok(!(row.tls_client_key_sealed ?? '').includes('PRIVATE'));
  });

  it('refuses a key that does not match its certificate, and either one alone', async () => {
    const other = await makeClientCertificate('other');
    const url = receiver.url(path('bad'));
    const post = (body: Record<string, unknown>) =>
      apiCall(server, 'POST', '/v1/webhooks/endpoints', t.adminToken, { name: 'x', url, ...body });
    assertError(
      await post({ tls_client_certificate: client.cert, tls_client_key: other.key }),
      400,
      'invalid_tls_client_key',
    );
    assertError(await post({ tls_client_certificate: client.cert }), 400, 'invalid_tls_client_key');
    assertError(await post({ tls_client_key: client.key }), 400, 'invalid_tls_client_certificate');
    assertError(
      await post({ tls_client_certificate: 'not a pem', tls_client_key: client.key }),
      400,
      'invalid_tls_client_certificate',
    );
    assertError(
      await post({
        tls_client_certificate: client.cert,
        tls_client_key: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----',
      }),
      400,
      'invalid_tls_client_key',
    );
    assertError(await post({ tls_ca_certificates: 'garbage' }), 400, 'invalid_tls_ca_certificates');
  });

  it('takes a renewed certificate for the same key alone, and removes the pair with null', async () => {
    const e = await createEndpoint(server, t.adminToken, {
      url: receiver.url(path('renew')),
      tls_client_certificate: client.cert,
      tls_client_key: client.key,
    });
    const renewed = await apiCall(server, 'PATCH', `/v1/webhooks/endpoints/${e.id}`, t.adminToken, {
      tls_client_certificate: client.cert,
    });
    assert.equal(renewed.status, 200, renewed.text);
    const other = await makeClientCertificate('other');
    assertError(
      await apiCall(server, 'PATCH', `/v1/webhooks/endpoints/${e.id}`, t.adminToken, {
        tls_client_certificate: other.cert,
      }),
      400,
      'invalid_tls_client_key',
    );
    const removed = await apiCall(server, 'PATCH', `/v1/webhooks/endpoints/${e.id}`, t.adminToken, {
      tls_client_certificate: null,
    });
    assert.equal(removed.json.tls.client_certificate, null);
  });
});

describe('endpoint TLS: a CA bundle for a receiver on a private PKI', () => {
  let privatePki: TestTls;
  let receiver: Receiver;
  let publicReceiver: Receiver;
  let t: Tenant;

  before(async () => {
    privatePki = await makeTestTls(); // a CA the server was never told to trust
    receiver = await Receiver.start(privatePki);
    publicReceiver = await Receiver.start(tls);
  });
  beforeEach(async () => {
    t = await newTenant(server);
  });
  after(async () => {
    await receiver?.close();
    await publicReceiver?.close();
  });

  it('refuses the receiver without the bundle, trusts it with the bundle, and the bundle replaces the store', async () => {
    const p = path('pki');
    const bare = await createEndpoint(server, t.adminToken, { url: receiver.localhostUrl(p) });
    const refused = await deliverOne(server, t, bare.id, (d) => d.attempts >= 1, 'an attempt');
    assert.match(refused.last_error, /certificate/i);
    await apiCall(server, 'PATCH', `/v1/webhooks/endpoints/${bare.id}`, t.adminToken, {
      tls_ca_certificates: privatePki.caPem,
    });
    await deliverOne(server, t, bare.id, (d) => d.state === 'succeeded', 'a delivery trusted through the bundle');
    assert.equal(receiver.hitsFor(p).length >= 1, true);
    const shown = await apiCall(server, 'GET', `/v1/webhooks/endpoints/${bare.id}`, t.adminToken);
    assert.deepEqual(shown.json.tls.ca_certificates, { count: 1, subjects: ['CN=Guard webhook test CA'] });
    await apiCall(server, 'DELETE', `/v1/webhooks/endpoints/${bare.id}`, t.adminToken);

    // The bundle is the only trust: a receiver the server's own store trusts is refused under it.
    const q = path('only-bundle');
    const ep = await createEndpoint(server, t.adminToken, {
      url: publicReceiver.localhostUrl(q),
      tls_ca_certificates: privatePki.caPem,
    });
    const d = await deliverOne(server, t, ep.id, (x) => x.attempts >= 1, 'an attempt');
    assert.notEqual(d.state, 'succeeded');
    assert.match(d.last_error, /certificate/i);
    assert.equal(publicReceiver.hitsFor(q).length, 0);
  });
});

describe('endpoint authentication: HTTP Basic', () => {
  let receiver: Receiver;
  let t: Tenant;
  before(async () => {
    receiver = await Receiver.start(tls);
  });
  beforeEach(async () => {
    t = await newTenant(server);
  });
  after(() => receiver?.close());

  it('sends Basic credentials, never shows the password, keeps it when an edit leaves it out', async () => {
    const p = path('basic');
    const want = `Basic ${Buffer.from('guard:pässword:1').toString('base64')}`;
    receiver.on(p, (hit) => ({ status: hit.headers.authorization === want ? 204 : 401 }));
    const e = await createEndpoint(server, t.adminToken, {
      url: receiver.url(p),
      auth: { type: 'basic', username: 'guard', password: 'pässword:1' },
    });
    assert.deepEqual((e as Loose).auth, { type: 'basic', username: 'guard' });
    await deliverOne(server, t, e.id, (d) => d.state === 'succeeded', 'an authenticated delivery');
    const renamed = await apiCall(server, 'PATCH', `/v1/webhooks/endpoints/${e.id}`, t.adminToken, {
      name: 'renamed',
      auth: { type: 'basic', username: 'guard' },
    });
    assert.equal(renamed.status, 200, renamed.text);
    assert.ok(!renamed.text.includes('pässword'));
    await deliverOne(server, t, e.id, (d) => d.state === 'succeeded', 'a delivery after the edit');
    assert.equal(receiver.hitsFor(p).length, 2);
    // The attempt view never shows the credential.
    const list = await apiCall(server, 'GET', `/v1/webhooks/endpoints/${e.id}/deliveries`, t.adminToken);
    const view = await apiCall(
      server,
      'GET',
      `/v1/webhooks/deliveries/${list.json.deliveries[0].id}/attempts/1`,
      t.adminToken,
    );
    assert.equal(view.status, 200, view.text);
    assert.ok(!view.text.includes(want.slice(6)), 'no Basic credential in the attempt view');
  });

  it('refuses auth beside a custom Authorization header, and a username with ":"', async () => {
    const url = receiver.url(path('conflict'));
    const post = (body: Record<string, unknown>) =>
      apiCall(server, 'POST', '/v1/webhooks/endpoints', t.adminToken, { name: 'x', url, ...body });
    assertError(
      await post({ headers: { authorization: 'Bearer x' }, auth: { type: 'basic', username: 'u', password: 'p' } }),
      400,
      'auth_conflict',
    );
    assertError(await post({ auth: { type: 'basic', username: 'a:b', password: 'p' } }), 400, 'invalid_auth');
    assertError(await post({ auth: { type: 'basic', username: 'a' } }), 400, 'invalid_auth');
  });
});

describe('endpoint authentication: OAuth2 client credentials against oidc-provider', () => {
  const CLIENT_SECRET = 'guard-client-secret-0123456789abcdef';
  let provider: Provider;
  let issuerServer: https.Server;
  let tokenUrl: string;
  let tokenRequests = 0;
  let receiver: Receiver;
  let t: Tenant;

  before(async () => {
    issuerServer = https.createServer({ key: tls.key, cert: tls.cert });
    issuerServer.listen(0, '127.0.0.1');
    await once(issuerServer, 'listening');
    const issuer = `https://localhost:${(issuerServer.address() as AddressInfo).port}`;
    provider = new Provider(issuer, {
      clients: [
        {
          client_id: 'guard-deliveries',
          client_secret: CLIENT_SECRET,
          grant_types: ['client_credentials'],
          redirect_uris: [],
          response_types: [],
          token_endpoint_auth_method: 'client_secret_basic',
          scope: 'webhooks:write',
        },
      ],
      scopes: ['webhooks:write'],
      features: { clientCredentials: { enabled: true }, devInteractions: { enabled: false } },
    });
    const callback = provider.callback();
    issuerServer.on('request', (req, res) => {
      if (req.method === 'POST' && req.url === '/token') tokenRequests++;
      callback(req, res);
    });
    tokenUrl = `${issuer}/token`;
    receiver = await Receiver.start(tls);
  });
  beforeEach(async () => {
    t = await newTenant(server);
  });
  after(async () => {
    await receiver?.close();
    issuerServer?.closeAllConnections();
    await new Promise((r) => issuerServer?.close(r));
  });

  /** Whether the request carries a bearer token the provider issued and still knows. */
  async function validToken(authorization: string | undefined): Promise<boolean> {
    const m = /^Bearer (.+)$/.exec(authorization ?? '');
    if (!m) return false;
    const token = await provider.ClientCredentials.find(m[1]);
    return token !== undefined && token.clientId === 'guard-deliveries' && token.scope === 'webhooks:write';
  }

  /** The endpoint's auth setting for the provider's client. */
  const clientCredentials = (secret = CLIENT_SECRET) => ({
    type: 'oauth2_client_credentials',
    token_url: tokenUrl,
    client_id: 'guard-deliveries',
    client_secret: secret,
    scope: 'webhooks:write',
  });

  it('fetches a token once, sends it as Bearer, and reuses it until it expires', async () => {
    const p = path('oauth');
    receiver.on(p, async (hit) => ({ status: (await validToken(hit.headers.authorization)) ? 200 : 401 }));
    const e = await createEndpoint(server, t.adminToken, {
      url: receiver.url(p),
      auth: clientCredentials(),
    });
    assert.deepEqual((e as Loose).auth, {
      type: 'oauth2_client_credentials',
      token_url: tokenUrl,
      client_id: 'guard-deliveries',
      scope: 'webhooks:write',
      audience: null,
    });
    const before = tokenRequests;
    for (let i = 0; i < 3; i++) await deliverOne(server, t, e.id, (d) => d.state === 'succeeded', `delivery ${i + 1}`);
    assert.equal(tokenRequests - before, 1, 'one token for three deliveries');
    const shown = await apiCall(server, 'GET', `/v1/webhooks/endpoints/${e.id}`, t.adminToken);
    assert.ok(!shown.text.includes(CLIENT_SECRET), 'the client secret is never returned');
  });

  it('fetches a new token once when the receiver answers 401, within the same attempt', async () => {
    const p = path('oauth-401');
    let refusedOnce = false;
    receiver.on(p, async (hit) => {
      if (!refusedOnce) {
        refusedOnce = true; // as if the token had been revoked
        return { status: 401 };
      }
      return { status: (await validToken(hit.headers.authorization)) ? 200 : 401 };
    });
    const ep = await createEndpoint(server, t.adminToken, {
      url: receiver.url(p),
      auth: clientCredentials(),
    });
    const before = tokenRequests;
    const d = await deliverOne(server, t, ep.id, (x) => x.state === 'succeeded', 'a delivery after one 401');
    assert.equal(d.attempts, 1, 'the second request is part of the same attempt');
    assert.equal(receiver.hitsFor(p).length, 2);
    assert.equal(tokenRequests - before, 2, 'the first token, then one more after the 401');
    const [first, second] = receiver.hitsFor(p);
    assert.notEqual(first.headers.authorization, second.headers.authorization);
  });

  it('names a refused token request in the attempt log, never the secret', async () => {
    const p = path('oauth-bad');
    const ep = await createEndpoint(server, t.adminToken, {
      url: receiver.url(p),
      auth: clientCredentials('wrong-secret'),
    });
    const d = await deliverOne(server, t, ep.id, (x) => x.attempts >= 1, 'an attempt');
    assert.match(d.last_error, /^OAuth2 token request to https:\/\/localhost:\d+ failed: HTTP 401 invalid_client/);
    assert.ok(!JSON.stringify(d).includes('wrong-secret'));
    assert.equal(receiver.hitsFor(p).length, 0, 'nothing reaches the receiver without a token');
  });

  it('holds a token URL to the endpoint rules', async () => {
    const post = (token_url: string) =>
      apiCall(server, 'POST', '/v1/webhooks/endpoints', t.adminToken, {
        name: 'x',
        url: receiver.url('/x'),
        auth: { type: 'oauth2_client_credentials', token_url, client_id: 'c', client_secret: 's' },
      });
    assertError(await post('http://localhost/token'), 400, 'invalid_auth');
    assertError(await post('https://user:pw@localhost/token'), 400, 'invalid_auth');
  });
});

/** An HTTP CONNECT proxy on loopback that records what it was asked to connect to. */
async function startConnectProxy(options: { requireAuth?: string } = {}) {
  const targets: string[] = [];
  const auths: (string | undefined)[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) return;
      client.off('data', onData);
      const lines = head.subarray(0, end).toString('latin1').split('\r\n');
      const [method, target] = lines[0].split(' ');
      const auth = lines.find((l) => /^proxy-authorization:/i.test(l))?.replace(/^[^:]+:\s*/, '');
      targets.push(target);
      auths.push(auth);
      if (method !== 'CONNECT') return client.end('HTTP/1.1 405 Method Not Allowed\r\n\r\n');
      if (options.requireAuth && auth !== options.requireAuth)
        return client.end('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n');
      const i = target.lastIndexOf(':');
      const upstream = net.connect({
        host: target.slice(0, i).replace(/^\[|\]$/g, ''),
        port: Number(target.slice(i + 1)),
      });
      upstream.once('connect', () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        const rest = head.subarray(end + 4);
        if (rest.length > 0) upstream.write(rest);
        client.pipe(upstream).pipe(client);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    };
    client.on('data', onData);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    port: (server.address() as AddressInfo).port,
    targets,
    auths,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        for (const s of sockets) s.destroy();
      }),
  };
}

describe('egress through an HTTP CONNECT proxy (--webhook-proxy)', () => {
  let receiver: Receiver;
  before(async () => {
    receiver = await Receiver.start(tls);
  });
  after(() => receiver?.close());

  it('tunnels to the vetted address, keeps the name for SNI and the certificate check, and sends proxy credentials', async () => {
    const proxy = await startConnectProxy({ requireAuth: `Basic ${Buffer.from('egress:s3cret').toString('base64')}` });
    const proxied = await startWebhookServer({
      caPem: tls.caPem,
      flags: { 'webhook-proxy': proxy.url.replace('http://', 'http://egress:s3cret@') },
    });
    try {
      const t = await newTenant(proxied);
      const p = path('proxied');
      // The receiver's certificate names localhost: the check passes only if SNI and
      // verification use the name while the tunnel goes to the address.
      const ep = await createEndpoint(proxied, t.adminToken, { url: receiver.localhostUrl(p) });
      await deliverOne(proxied, t, ep.id, (d) => d.state === 'succeeded', 'a delivery through the proxy');
      assert.equal(receiver.hitsFor(p).length, 1);
      assert.ok(proxy.targets.length >= 1);
      for (const target of proxy.targets)
        assert.match(target, new RegExp(`^(127\\.0\\.0\\.1|\\[::1\\]):${receiver.port}$`));
    } finally {
      await proxied.close();
      await proxy.close();
    }
  });

  it('refuses a private address before the proxy is asked (the SSRF rules hold), and names a refusing proxy', async () => {
    const proxy = await startConnectProxy({ requireAuth: 'Basic never' });
    const strict = await startWebhookServer({
      caPem: tls.caPem,
      flags: { 'webhook-proxy': proxy.url, 'webhook-allow-private': false },
    });
    try {
      const t = await newTenant(strict);
      // A name that resolves to loopback: refused on the resolved address, before any CONNECT.
      const ep = await createEndpoint(strict, t.adminToken, { url: receiver.localhostUrl(path('private')) });
      const d = await deliverOne(strict, t, ep.id, (x) => x.attempts >= 1, 'a refused attempt');
      assert.match(d.last_error, /loopback/);
      assert.deepEqual(proxy.targets, [], 'the proxy was never asked');
    } finally {
      await strict.close();
    }
    const open = await startWebhookServer({ caPem: tls.caPem, flags: { 'webhook-proxy': proxy.url } });
    try {
      const t = await newTenant(open);
      const ep = await createEndpoint(open, t.adminToken, { url: receiver.localhostUrl(path('refused-by-proxy')) });
      const d = await deliverOne(open, t, ep.id, (x) => x.attempts >= 1, 'an attempt the proxy refuses');
      assert.match(d.last_error, /webhook proxy http:\/\/127\.0\.0\.1:\d+: CONNECT .* refused: HTTP\/1\.1 407/);
    } finally {
      await open.close();
      await proxy.close();
    }
  });

  it('refuses a proxy setting that is not http://host:port', async () => {
    await assert.rejects(
      startWebhookServer({ caPem: tls.caPem, flags: { 'webhook-proxy': 'https://proxy.example:3128' } }),
      /--webhook-proxy \(GUARD_SERVER_WEBHOOK_PROXY, webhook_proxy\) must be http:\/\/host:port/,
    );
  });
});

describe('endpoint.certificate_expiring: an alert before the client certificate expires', () => {
  let receiver: Receiver;
  let t: Tenant;
  before(async () => {
    receiver = await Receiver.start(tls);
    t = await newTenant(server);
  });
  after(() => receiver?.close());

  const run = () =>
    announceExpiringCertificates(server.deps.db, (event) => server.deps.outbox.write(event), server.clock.now());

  it('announces 7 and then 1 day before, once each, to every subscribed endpoint (itself too); a renewed certificate starts over', async () => {
    const client = await makeClientCertificate('expiring.acme.example', 5);
    const events = ['signal_created', 'endpoint.certificate_expiring'];
    const [p, q] = [path('expiring'), path('watcher')];
    const own = await createEndpoint(server, t.adminToken, {
      url: receiver.url(p),
      event_types: events,
      tls_client_certificate: client.cert,
      tls_client_key: client.key,
    });
    const watcher = await createEndpoint(server, t.adminToken, { url: receiver.url(q), event_types: events });

    // Each run covers every tenant: the counts below are this endpoint's events, as received.
    await run(); // the 7-day threshold, crossed already (30 is behind it)
    await run(); // once
    const [mine] = await receiver.waitForHits(p, 1);
    const [theirs] = await receiver.waitForHits(q, 1);
    for (const [hit, secret] of [
      [mine, own.secret],
      [theirs, watcher.secret],
    ] as const) {
      const e = constructGuardEvent(hit.body, hit.headers, secret, { now: server.clock.now });
      assert.equal(e.event_type, 'endpoint.certificate_expiring');
      if (e.event_type !== 'endpoint.certificate_expiring') continue;
      assert.equal(e.data.endpoint_id, own.id);
      assert.equal(e.data.threshold_days, 7);
      assert.equal(e.data.days_left, 4);
      assert.match(e.data.certificate_subject, /CN=expiring\.acme\.example/);
      assert.equal(e.data.url, new URL(receiver.url(p)).origin);
      assert.match(e.console_url, new RegExp(`/console/settings/integrations/webhooks/${own.id}$`));
    }

    // Every delivery made before the clock moves: a lease still held would look expired to it,
    // and the delivery be sent again (at least once), which is not what this test counts.
    const settle = () => waitForDeliveriesMade(server, [own.id, watcher.id]);
    await settle();
    server.clock.advance(4.5 * 86_400_000);
    await run(); // the 1-day threshold
    await run();
    const [, last] = await receiver.waitForHits(q, 2);
    const e = constructGuardEvent(last.body, last.headers, watcher.secret, { now: server.clock.now });
    assert.ok(e.event_type === 'endpoint.certificate_expiring' && e.data.threshold_days === 1);

    const renewed = await makeClientCertificate('expiring.acme.example', 60);
    const patched = await apiCall(server, 'PATCH', `/v1/webhooks/endpoints/${own.id}`, t.adminToken, {
      tls_client_certificate: renewed.cert,
      tls_client_key: renewed.key,
    });
    assert.equal(patched.status, 200, patched.text);
    await run(); // a certificate 60 days from its expiry announces nothing
    await settle();
    server.clock.advance(31 * 86_400_000);
    await run(); // the renewed one, 30 days before
    const hits = await receiver.waitForHits(q, 3);
    await settle();
    assert.equal(receiver.hitsFor(q).length, 3, 'once per threshold: 7, 1, then 30 for the renewed one');
    const renewedEvent = constructGuardEvent(hits[2].body, hits[2].headers, watcher.secret, { now: server.clock.now });
    assert.ok(renewedEvent.event_type === 'endpoint.certificate_expiring' && renewedEvent.data.threshold_days === 30);
  });
});
