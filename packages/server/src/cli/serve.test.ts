// The start message `serve` prints: every path and command it names must exist where the server
// runs. From a checkout that is the repository's bin files and docs; in the package layout
// (packaging/test/server-start-message.test.ts runs the installed server and checks each one
// in a container) the commands on PATH, the man page and `setup` as the server's user.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { loadServerConfig } from '../config.ts';
import { docsAt } from './help.ts';
import { type StartLayout, startLayout, startMessage } from './serve.ts';

const INSTALLED: StartLayout = {
  server: 'guard-server',
  agent: 'guard-agent',
  docs: 'man guard-server',
  runAs: 'runuser -u guard -- ',
  checkout: false,
};

function message(flags: Record<string, string>, layout: StartLayout): string {
  const config = loadServerConfig({ 'data-dir': '/var/lib/guard-server', ...flags }, {}, '/');
  return startMessage({ version: '1.2.3', url: 'http://127.0.0.1:8080', config }, layout);
}

describe('serve start message', () => {
  it('from a checkout names the repository’s bin files and docs, which exist', () => {
    const layout = startLayout();
    assert.equal(layout.checkout, true);
    for (const path of [layout.server, layout.agent, layout.docs]) assert.ok(existsSync(path), path);
    const text = message({}, layout);
    assert.ok(text.includes(`${layout.server} setup --data-dir /var/lib/guard-server --json`), text);
    assert.match(text, /npm run demo/);
  });

  it('installed: commands on PATH, setup as the server’s user on its data dir, the man page, no npm', () => {
    const text = message({}, INSTALLED);
    assert.match(
      text,
      /^ {2}create a tenant: {3}runuser -u guard -- guard-server setup --data-dir \/var\/lib\/guard-server --json {3}\(as root; as guard itself, without runuser\)$/m,
    );
    assert.match(
      text,
      /^ {2}enroll an agent: {3}guard-agent enroll --url http:\/\/127\.0\.0\.1:8080 --token-file FILE /m,
    );
    assert.match(text, /^ {2}docs: +man guard-server$/m);
    assert.match(text, /^ {2}database: +SQLite \/var\/lib\/guard-server\/guard\.db$/m);
    assert.doesNotMatch(text, /npm|packages\/|\.\/data/);
  });

  it('in the container image: setup through exec, no runuser, no man page', () => {
    const previous = process.env.GUARD_SERVER_IMAGE;
    process.env.GUARD_SERVER_IMAGE = 'guard-server:1.2.3';
    try {
      const text = message({}, startLayout());
      assert.match(
        text,
        /^ {2}create a tenant: {3}docker exec CONTAINER guard-server setup --data-dir \/var\/lib\/guard-server --json {3}\(or podman exec; with compose: compose exec guard guard-server setup --json\)$/m,
      );
      assert.doesNotMatch(text, /runuser|man guard-server|npm/);
    } finally {
      if (previous === undefined) delete process.env.GUARD_SERVER_IMAGE;
      else process.env.GUARD_SERVER_IMAGE = previous;
    }
  });

  it('agents are told the public URL when one is set', () => {
    const text = message({ 'public-url': 'https://guard.example.com' }, INSTALLED);
    assert.match(text, /guard-agent enroll --url https:\/\/guard\.example\.com --token-file FILE/);
    assert.match(text, /listening on http:\/\/127\.0\.0\.1:8080/);
  });

  it('on PostgreSQL, setup names the database, not the data dir', () => {
    const text = message({ database: 'postgres://guard@db.example.com:5432/guard' }, INSTALLED);
    assert.match(text, /guard-server setup --database \S+ --json/);
  });
});

describe('the help footer’s Docs line', () => {
  it('is the page’s path in a checkout, and the page in the source repository where no docs/ is installed', () => {
    assert.equal(docsAt('docs/deploy.md'), 'docs/deploy.md');
    assert.match(
      docsAt('docs/deploy.md', '/nonexistent/'),
      /^https:\/\/github\.com\/guard-project\/guard\/blob\/main\/docs\/deploy\.md/,
    );
  });
});
