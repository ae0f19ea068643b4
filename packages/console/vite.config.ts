// Vite builds the console into dist/, which guard-server serves at /console/ (index.html
// no-cache, hashed assets under /console/assets/ immutable). `npm run dev -w packages/console`
// serves the source with the API proxied to a running guard-server (GUARD_API, default
// http://127.0.0.1:8080); the proxy rewrites Origin to the server's own, as the CSRF check wants.

import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const api = process.env.GUARD_API ?? 'http://127.0.0.1:8080';

export default defineConfig({
  base: '/console/',
  plugins: [react()],
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
