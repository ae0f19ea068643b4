// The API reference at /docs (Swagger UI) shares the console's origin, so it carries the same
// kind of defences (issue 19, finding 6): a CSP that allows only its own origin and no framing,
// nosniff and a same-origin Referrer-Policy on every answer under /docs — and the page still
// renders in Chromium under that CSP, with no violation reported.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api } from '../../server/test/harness.ts';
import { type ConsoleWorld, newContext, newPage, startConsoleWorld } from './console-harness.ts';

describe('the API reference at /docs', () => {
  let world: ConsoleWorld;
  before(async () => {
    world = await startConsoleWorld();
  });
  after(() => world?.close());

  it('answers with a CSP without framing, nosniff and a same-origin Referrer-Policy', async () => {
    for (const path of ['/docs', '/docs/', '/docs/static/index.html', '/docs/static/swagger-ui.css', '/docs/json']) {
      const res = await api(world.base, 'GET', path);
      assert.ok(res.status < 400, `${path}: ${res.status}`);
      const csp = res.headers.get('content-security-policy') ?? '';
      assert.match(csp, /frame-ancestors 'none'/, `${path}: ${csp}`);
      assert.match(csp, /default-src 'self'/, `${path}: ${csp}`);
      assert.doesNotMatch(csp, /https:|validator\.swagger\.io|unsafe-eval/, `${path}: ${csp}`);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', path);
      assert.equal(res.headers.get('referrer-policy'), 'same-origin', path);
    }
  });

  it('renders the operations in Chromium under that CSP, with no violation', async () => {
    const context = await newContext(world);
    const page = await newPage(context);
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/.test(m.text())) violations.push(m.text());
    });
    try {
      await page.goto('/docs/static/index.html');
      await page.locator('.opblock-summary-path', { hasText: '/v1/signals' }).first().waitFor({ timeout: 30_000 });
      assert.deepEqual(violations, []);
    } finally {
      await context.close();
    }
  });
});
