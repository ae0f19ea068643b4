// Vite builds the console into dist/, which guard-server serves at /console/ (index.html
// no-cache, hashed assets under /console/assets/ immutable). `npm run dev -w packages/console`
// serves the source with the API proxied to a running guard-server (GUARD_API, default
// http://127.0.0.1:8080); the proxy rewrites Origin to the server's own, as the CSRF check wants.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

const api = process.env.GUARD_API ?? 'http://127.0.0.1:8080';

const brotli = promisify(brotliCompress);
const gz = promisify(gzip);

/**
 * Writes a .br and a .gz twin beside every text file of the build; guard-server sends the
 * twin a browser accepts, so it never compresses on the fly and the first page stays small.
 */
function precompress(): Plugin {
  return {
    name: 'guard-precompress',
    apply: 'build',
    async writeBundle(options, bundle) {
      const dir = options.dir ?? 'dist';
      await Promise.all(
        Object.values(bundle)
          .filter((f) => /\.(js|css|html|svg|json)$/.test(f.fileName))
          .map(async (f) => {
            const bytes = Buffer.from(f.type === 'chunk' ? f.code : f.source);
            if (bytes.length < 1024) return;
            const path = join(dir, f.fileName);
            const [br, gzipped] = await Promise.all([
              brotli(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
              gz(bytes, { level: 9 }),
            ]);
            await Promise.all([writeFile(`${path}.br`, br), writeFile(`${path}.gz`, gzipped)]);
          }),
      );
    },
  };
}

export default defineConfig({
  base: '/console/',
  plugins: [react(), precompress()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Nothing inlined as data: URLs: the server's CSP is default-src 'self'.
    assetsInlineLimit: 0,
    target: 'es2022',
    reportCompressedSize: false,
  },
  server: {
    proxy: {
      '/v1': {
        target: api,
        changeOrigin: true,
        configure(proxy) {
          proxy.on('proxyReq', (req) => {
            if (req.getHeader('origin')) req.setHeader('origin', new URL(api).origin);
          });
        },
      },
    },
  },
});
