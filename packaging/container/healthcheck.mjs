// The image's health check (HEALTHCHECK, DESIGN §8): GET /readyz on the server's own listen
// address; healthy (exit 0) on 200, unhealthy (exit 1) otherwise. Plain JavaScript, so it
// starts in a few tens of milliseconds without loading the server. With native TLS it speaks
// HTTPS to itself and does not check its own certificate (the address is loopback).
import http from 'node:http';
import https from 'node:https';

const listen = process.env.GUARD_SERVER_LISTEN || '0.0.0.0:8080';
const colon = listen.lastIndexOf(':');
const port = Number(listen.slice(colon + 1));
let host = listen.slice(0, colon).replace(/^\[|\]$/g, '');
if (host === '' || host === '0.0.0.0') host = '127.0.0.1';
if (host === '::') host = '::1';
const tls = Boolean(process.env.GUARD_SERVER_TLS_CERT);
const request = (tls ? https : http).get(
  { host, port, path: '/readyz', timeout: 4000, rejectUnauthorized: false },
  (res) => {
    res.resume();
    console.log(`/readyz ${res.statusCode}`);
    process.exit(res.statusCode === 200 ? 0 : 1);
  },
);
request.on('timeout', () => request.destroy(new Error('no answer in 4 s')));
request.on('error', (error) => {
  console.log(`/readyz: ${error.message}`);
  process.exit(1);
});
