// What Next.js does for an App Router route on Node, in little: the request becomes a Fetch
// Request (the body streamed as received), the route module's POST answers it with a Response.
import https from 'node:https';
import { Readable } from 'node:stream';
import { POST } from './app/api/guard/webhook/route.js';

const server = https.createServer({ key: process.env.TLS_KEY, cert: process.env.TLS_CERT }, async (req, res) => {
  if (req.method !== 'POST' || req.url !== '/guard/webhook') {
    res.writeHead(404).end();
    return;
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined) headers.append(name, v);
  }
  const request = new Request(`https://localhost${req.url}`, {
    method: req.method,
    headers,
    body: Readable.toWeb(req),
    duplex: 'half',
  });
  const response = await POST(request);
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => console.log(JSON.stringify({ listening: true })));
