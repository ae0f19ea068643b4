// guard-server serves the built console at /console/ (DESIGN §7): caching per file kind, deep
// links load index.html, security headers on every console answer, `/` redirects, and a page
// that says how to build the console when it was not built. A throw-away dist stands in for
// the SPA's build (--console-dir).

import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { api, makeTempDir, startTestServer, type TestServer } from './harness.ts';

const INDEX =
  '<!doctype html><html><head><script type="module" src="/console/assets/app-3f2a1b.js"></script></head><body><div id="root"></div></body></html>';
const APP_JS = 'console.log("guard console");\n'.repeat(50);

function assertConsoleHeaders(headers: Headers) {
  assert.equal(
    headers.get('content-security-policy'),
    "default-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'",
  );
  assert.equal(headers.get('x-content-type-options'), 'nosniff');
  assert.equal(headers.get('referrer-policy'), 'same-origin');
}

describe('the console at /console/', () => {
  let server: TestServer;
  let base: string;

  before(async () => {
    const dist = await makeTempDir('console-dist');
    await mkdir(join(dist, 'assets'));
    await writeFile(join(dist, 'index.html'), INDEX);
    await writeFile(join(dist, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    await writeFile(join(dist, 'assets', 'app-3f2a1b.js'), APP_JS);
    await writeFile(join(dist, 'assets', 'app-3f2a1b.js.gz'), gzipSync(APP_JS));
    await writeFile(join(dist, 'assets', 'app-3f2a1b.css'), 'body{margin:0}');
    server = await startTestServer({ flags: { 'console-dir': dist } });
    base = server.url;
  });
  after(() => server.cleanup());

  it('serves index.html with no-cache and the security headers', async () => {
    const res = await api(base, 'GET', '/console/');
    assert.equal(res.status, 200);
    assert.equal(res.text, INDEX);
    assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    assertConsoleHeaders(res.headers);
  });

  it('deep links load the app', async () => {
    for (const path of [
      '/console/signals/sig_0193',
      '/console/settings/integrations/webhooks',
      '/console/set-password',
    ]) {
      const res = await api(base, 'GET', path);
      assert.equal(res.status, 200, path);
      assert.equal(res.text, INDEX, path);
      assert.equal(res.headers.get('cache-control'), 'no-cache');
      assertConsoleHeaders(res.headers);
    }
  });

  it('hashed assets are immutable for a year, with their content type', async () => {
    const res = await api(base, 'GET', '/console/assets/app-3f2a1b.css');
    assert.equal(res.status, 200);
    assert.equal(res.text, 'body{margin:0}');
    assert.equal(res.headers.get('content-type'), 'text/css; charset=utf-8');
    assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assertConsoleHeaders(res.headers);
  });

  it('a gzip twin is served to clients that accept it', async () => {
    const res = await fetch(`${base}/console/assets/app-3f2a1b.js`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-encoding'), 'gzip');
    assert.equal(res.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(await res.text(), APP_JS, 'fetch decodes it back to the file');
    const plain = await api(base, 'GET', '/console/assets/app-3f2a1b.js', {
      headers: { 'accept-encoding': 'identity' },
    });
    assert.equal(plain.headers.get('content-encoding'), null);
    assert.equal(plain.text, APP_JS);
  });

  it('a missing asset is 404, not the app; a path that would leave dist never reads outside it', async () => {
    const res = await api(base, 'GET', '/console/assets/app-000000.js');
    assert.equal(res.status, 404);
    assertConsoleHeaders(res.headers);
    for (const path of ['/console/%2e%2e/%2e%2e/package.json', '/console/..%2fpackage.json', '/console/.env']) {
      const r = await api(base, 'GET', path);
      assert.ok(r.status === 404 || r.text === INDEX, `${path}: ${r.status} ${r.text.slice(0, 80)}`);
    }
  });

  it('revalidation with the ETag answers 304', async () => {
    const first = await api(base, 'GET', '/console/favicon.svg');
    const etag = first.headers.get('etag');
    assert.ok(etag);
    assert.equal(first.headers.get('content-type'), 'image/svg+xml');
    const again = await api(base, 'GET', '/console/favicon.svg', { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
  });

  it('/ and /console redirect to /console/', async () => {
    for (const path of ['/', '/console']) {
      const res = await api(base, 'GET', path);
      assert.ok([301, 302].includes(res.status), `${path}: ${res.status}`);
      assert.equal(res.headers.get('location'), '/console/');
    }
  });

  it('the API is not touched: /v1 routes and their errors keep their JSON', async () => {
    const res = await api(base, 'GET', '/v1/nope');
    assert.equal(res.status, 404);
    assert.equal(res.json.error.code, 'not_found');
  });
});

describe('a server whose console was not built', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ flags: { 'console-dir': await makeTempDir('no-dist') } });
  });
  after(() => server.cleanup());

  it('says how to build it on every console page', async () => {
    for (const path of ['/console/', '/console/signals/x']) {
      const res = await api(server.url, 'GET', path);
      assert.equal(res.status, 503);
      assert.match(res.text, /npm run build -w packages\/console/);
      assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
      assertConsoleHeaders(res.headers);
    }
  });
});
