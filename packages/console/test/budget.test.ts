// The JS budget (issue 10: ≤ 250 KiB gzip for the first page), held for the whole app: every
// chunk of the build together, as the server sends it to a browser that takes gzip. The first
// page loads only some of them; bench/console.ts measures that page in chromium.

import assert from 'node:assert/strict';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { CONSOLE_DIST, ensureConsoleBuilt } from '../../../scripts/build-console.ts';

const BUDGET_BYTES = 250 * 1024;

test('all of the console’s JavaScript, gzipped, fits the first page’s 250 KiB budget', async () => {
  await ensureConsoleBuilt();
  const assets = join(CONSOLE_DIST, 'assets');
  const js = (await readdir(assets)).filter((f) => f.endsWith('.js'));
  let gz = 0;
  for (const f of js) {
    // Small chunks have no twin: the server sends them as they are.
    const twin = await stat(join(assets, `${f}.gz`)).catch(() => undefined);
    gz += twin ? twin.size : (await stat(join(assets, f))).size;
  }
  assert.ok(js.length > 5, 'one chunk per page');
  assert.ok(gz <= BUDGET_BYTES, `${(gz / 1024).toFixed(1)} KiB of gzipped JS is over the 250 KiB budget`);
});
