import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createAgents, destroyAgents, type HttpDeps, realSleep } from './deps.ts';
import { send } from './exchange.ts';

/**
 * A loopback service that answers 200 with the request's number, except where `drop` says so:
 * then it closes the connection without answering, as a server whose keep-alive timeout ran
 * out just as the agent reused the connection does.
 */
async function startService(drop: (request: number, onConnection: number) => boolean) {
  const sockets = new Map<Socket, number>();
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests += 1;
    const onConnection = (sockets.get(req.socket) ?? 0) + 1;
    sockets.set(req.socket, onConnection);
    req.resume();
    req.on('end', () => {
      if (drop(requests, onConnection)) req.socket.destroy();
      else res.end(String(requests));
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`,
    connections: () => sockets.size,
    requests: () => requests,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

describe('send on a kept-alive connection', () => {
  let deps: HttpDeps;
  before(() => {
    deps = {
      agents: createAgents({}),
      userAgent: 'guard-agent/test',
      now: () => new Date(),
      sleep: realSleep,
      random: Math.random,
      notice: () => {},
    };
  });
  after(() => destroyAgents(deps.agents));

  const post = (url: string, body: string | undefined = '{}') =>
    send(deps, url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  it('a reused connection the service closed unanswered: the request goes again on a new one', async () => {
    const service = await startService((_n, onConnection) => onConnection === 2);
    try {
      assert.equal((await post(service.url)).text, '1');
      const second = await post(service.url); // reuses the first connection, which the service drops
      assert.equal(second.status, 200);
      assert.equal(second.text, '3');
      assert.equal(service.connections(), 2);
      assert.equal(service.requests(), 3);
    } finally {
      service.close();
    }
  });

  it('a new connection closed unanswered is a failure of the try (the step decides)', async () => {
    const service = await startService(() => true);
    try {
      await assert.rejects(post(service.url), { code: 'ECONNRESET' });
      assert.equal(service.requests(), 1);
    } finally {
      service.close();
    }
  });

  it('a streamed body is not sent twice on its own', async () => {
    const service = await startService((_n, onConnection) => onConnection === 2);
    try {
      await post(service.url);
      let writes = 0;
      const body = Buffer.from('{"streamed":true}');
      const streamed = send(deps, service.url, {
        method: 'PUT',
        headers: { 'content-length': String(body.length) },
        body: async (write) => {
          writes += 1;
          await write(body);
        },
      });
      await assert.rejects(streamed, { code: 'ECONNRESET' });
      assert.equal(writes, 1);
      assert.equal(service.requests(), 2);
    } finally {
      service.close();
    }
  });
});
