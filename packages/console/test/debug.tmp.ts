import { NARROW, newContext, newPage, open, signIn, startConsoleWorld } from './console-harness.ts';

const world = await startConsoleWorld();
const ctx = await newContext(world, NARROW);
const page = await newPage(ctx);
await open(page, '/');
await signIn(page, world.tenant.admin_email, world.tenant.admin_password);
for (const path of process.argv.slice(2)) {
  await open(page, path);
  await page.waitForTimeout(800);
  console.log(
    path,
    await page.evaluate(() => {
      const out: string[] = [];
      for (const el of document.querySelectorAll('body *')) {
        const r = el.getBoundingClientRect();
        let clipped = false;
        for (let a = el.parentElement; a; a = a.parentElement) {
          const o = getComputedStyle(a).overflowX;
          if (o === 'auto' || o === 'scroll' || o === 'hidden') clipped = true;
        }
        if (!clipped && r.right > window.innerWidth + 1)
          out.push(`${el.tagName}.${el.className} right=${Math.round(r.right)} w=${Math.round(r.width)}`);
      }
      return out.slice(0, 12);
    }),
  );
  await page.screenshot({ path: `/tmp/dbg/${path.replaceAll('/', '_')}.png`, fullPage: true });
}
await world.close();
