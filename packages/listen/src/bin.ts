// The `guard` command's entry: the bundle's (dist/guard.cjs) and, in the repository,
// `node packages/listen/src/bin.ts`. The only place that ends the process: at once, so that
// no idle keep-alive connection (to the server, to the local receiver) holds it open.

import { main } from './main.ts';

// A reader that went away (`guard listen … | head`) is no error of ours.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

main(process.argv.slice(2)).then((code) => process.exit(code));
