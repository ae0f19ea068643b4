// Obfuscation (obfuscate.ts) and reveal (reveal.ts): what each kind of value looks like where
// it is found, and three properties over generated log text cut into random chunks and run
// through the real streams: the same value is the same token in every member, reveal gives
// back the text exactly, and no original value of the four kinds is left.

import assert from 'node:assert/strict';
import { isIPv6 } from 'node:net';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { type KnownNames, ObfuscateStream, Obfuscator, replaceIn } from './obfuscate.ts';
import { RevealStream } from './reveal.ts';

function obfuscate(text: string, known?: KnownNames): { out: string; map: Record<string, string> } {
  const o = new Obfuscator(known);
  const out = o.obfuscate(text);
  return { out, map: o.map() };
}

async function run(stream: NodeJS.ReadWriteStream, chunks: Buffer[]): Promise<Buffer> {
  const out: Buffer[] = [];
  await pipeline(
    Readable.from(chunks),
    stream,
    new Writable({
      write(chunk: Buffer, _enc, done) {
        out.push(chunk);
        done();
      },
    }),
  );
  return Buffer.concat(out);
}

/** `bytes` cut at the given fractions of its length. */
function cut(bytes: Buffer, fractions: number[]): Buffer[] {
  const at = [...new Set(fractions.map((f) => Math.floor(f * bytes.length)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const a of at) {
    chunks.push(bytes.subarray(from, a));
    from = a;
  }
  chunks.push(bytes.subarray(from));
  return chunks.filter((c) => c.length > 0);
}

describe('what obfuscation finds', () => {
  it('replaces addresses, emails, keyed and sshd users, keyed and known hosts; keeps what identifies nothing', () => {
    const text = [
      'time=2026-11-28T05:00:00.123Z level=INFO msg="exec" user=alice host=db.internal:5432 peer=10.1.2.3 via=[2001:db8::1]:443',
      'sshd[1]: Accepted publickey for carol from 192.168.1.9 port 22 ssh2',
      'sshd[2]: Failed password for invalid user dave from 2001:db8::2: port 1',
      'sshd[3]: Invalid user eve from 10.0.0.8',
      'pam_unix(sshd:session): session opened for user frank(uid=1000) by (uid=0)',
      '{"user":"gina","hostname":"WEB01.corp.example","to":"Gina@Example.com"} on web01, /home/hank/x',
      'kept: 127.0.0.1 ::1 0.0.0.0 localhost user=root version 1.2.3 mac aa:bb:cc:dd:ee:ff 12:34:56',
    ].join('\n');
    const { out, map } = obfuscate(text, { hosts: ['web01', 'WEB01.corp.example', 'localhost'], users: ['hank'] });
    assert.equal(
      out,
      [
        'time=2026-11-28T05:00:00.123Z level=INFO msg="exec" user=user-1 host=host-1:5432 peer=ip-1 via=[ip-2]:443',
        'sshd[1]: Accepted publickey for user-2 from ip-3 port 22 ssh2',
        'sshd[2]: Failed password for invalid user user-3 from ip-4: port 1',
        'sshd[3]: Invalid user user-4 from ip-5',
        'pam_unix(sshd:session): session opened for user user-5(uid=1000) by (uid=0)',
        '{"user":"user-6","hostname":"host-2","to":"email-1"} on host-3, /home/user-7/x',
        'kept: 127.0.0.1 ::1 0.0.0.0 localhost user=root version 1.2.3 mac aa:bb:cc:dd:ee:ff 12:34:56',
      ].join('\n'),
    );
    assert.deepEqual(map, {
      'user-1': 'alice',
      'host-1': 'db.internal',
      'ip-1': '10.1.2.3',
      'ip-2': '2001:db8::1',
      'user-2': 'carol',
      'ip-3': '192.168.1.9',
      'user-3': 'dave',
      'ip-4': '2001:db8::2',
      'user-4': 'eve',
      'ip-5': '10.0.0.8',
      'user-5': 'frank',
      'user-6': 'gina',
      'host-2': 'WEB01.corp.example',
      'email-1': 'Gina@Example.com',
      'host-3': 'web01',
      'user-7': 'hank',
    });
  });

  it('gives one token per value: host names and emails in any case, users exactly', () => {
    const { out } = obfuscate('a=Bob@Example.COM b=bob@example.com host=Web02 hostname=web02 user=Bob user=bob');
    assert.equal(out, 'a=email-1 b=email-1 host=host-1 hostname=host-1 user=user-1 user=user-2');
  });

  it('takes an email whole, also where a known user name starts it', () => {
    const { out } = obfuscate('mail alice@corp.example.', { hosts: [], users: ['alice'] });
    assert.equal(out, 'mail email-1.');
  });

  it('keeps UTF-8 values as UTF-8 in the map', () => {
    const o = new Obfuscator();
    const text = Buffer.from('user=jürgen ok', 'utf8').toString('latin1');
    assert.equal(o.obfuscate(text), 'user=user-1 ok');
    assert.deepEqual(o.map(), { 'user-1': 'jürgen' });
  });

  it('runs in linear time on hostile runs (colons, digits and dots, @, =)', () => {
    const o = new Obfuscator({ hosts: ['web01'], users: ['alice'] });
    for (const unit of [':', '1.', 'a@', '=', 'user=', '1:', 'a.b@']) {
      const text = unit.repeat(Math.ceil(2_000_000 / unit.length));
      const t0 = performance.now();
      o.obfuscate(text);
      assert.ok(performance.now() - t0 < 5_000, `${JSON.stringify(unit)} run took too long`);
    }
  });
});

describe('replaceIn: tokens into the bytes themselves when they fit', () => {
  const o = new Obfuscator();
  const rewrite = (text: string) => {
    const piece = Buffer.from(text, 'latin1');
    const out = replaceIn(piece, o.find(text));
    return { out: out.toString('latin1'), inPlace: out.buffer === piece.buffer && out.byteOffset === piece.byteOffset };
  };

  it('writes in place when every token ends within the text it replaced', () => {
    const r = rewrite('a peer=10.20.30.40 b peer=10.20.30.41 c');
    assert.deepEqual(r, { out: 'a peer=ip-1 b peer=ip-2 c', inPlace: true });
  });

  it('writes a new buffer when a token would outrun the text not yet read', () => {
    const r = rewrite('user=bo x peer=10.20.30.42');
    assert.deepEqual(r, { out: 'user=user-1 x peer=ip-3', inPlace: false });
  });

  it('writes in place when a longer token is preceded by enough shorter ones', () => {
    const r = rewrite('peer=10.200.200.200 peer=10.200.200.201 user=cy end');
    assert.deepEqual(r, { out: 'peer=ip-4 peer=ip-5 user=user-2 end', inPlace: true });
  });
});

describe('the IPv6 hint', () => {
  it('finds every written form (full, IPv4 tail, compressed, zone) and takes no time of day', () => {
    const { out, map } = obfuscate(
      'a 2001:db8:1:2:3:4:5:6 b 1:2:3:4:5:6:10.1.2.3 c fe80::1%eth0 d ::ffff:10.9.8.7 e 12:34:56.789 f T08:12:34Z',
    );
    assert.equal(out, 'a ip-1 b ip-2 c ip-3%eth0 d ip-4 e 12:34:56.789 f T08:12:34Z');
    assert.deepEqual(Object.values(map), [
      '2001:db8:1:2:3:4:5:6',
      '1:2:3:4:5:6:10.1.2.3',
      'fe80::1',
      '::ffff:10.9.8.7',
    ]);
  });
});

describe('reveal', () => {
  it('replaces whole tokens only and leaves unknown ones', async () => {
    const map = new Map([
      ['host-1', 'web01'],
      ['ip-1', '10.0.0.1'],
    ]);
    const out = await run(new RevealStream(map), [Buffer.from('host-1 xhost-1 host-12 ip-1: ip-2 (host-1)')]);
    assert.equal(out.toString(), 'web01 xhost-1 host-12 10.0.0.1: ip-2 (web01)');
  });
});

// ---------------------------------------------------------------------------------------
// Properties

const label = fc.stringMatching(/^[a-z][a-z0-9]{1,6}[0-9]$/);
const ipv4 = fc
  .tuple(fc.integer({ min: 1, max: 223 }), fc.nat(255), fc.nat(255), fc.integer({ min: 1, max: 254 }))
  .filter(([a]) => a !== 127)
  .map((o) => o.join('.'));
const ipv6 = fc
  .ipV6()
  .filter((a) => isIPv6(a) && !/^[0:]*1?$/.test(a) && !/^::(?:ffff:)?(?:[0-9.]+)$/i.test(a) && !/^[0:]*$/.test(a))
  .filter((a) => !/^::(?:ffff:)?127\./i.test(a));
const email = fc
  .tuple(fc.stringMatching(/^[a-z0-9][a-z0-9._+-]{0,8}[a-z0-9]$/), label, fc.constantFrom('com', 'org', 'example'))
  .map(([local, domain, tld]) => `${local}@${domain}.${tld}`);
const userName = fc.stringMatching(/^[a-z]{3,8}[0-9]{1,3}$/);
const hostName = fc.tuple(label, fc.option(label, { nil: undefined })).map(([a, b]) => (b ? `${a}.${b}` : a));

type Value = { kind: 'ip' | 'email' | 'user' | 'host'; text: string };
/** Where a value is written: each form is one the patterns are documented to find. */
const placed = fc.oneof(
  ipv4.map((t): [Value, string] => [{ kind: 'ip', text: t }, `peer=${t}`]),
  ipv4.map((t): [Value, string] => [{ kind: 'ip', text: t }, `"addr": "${t}"`]),
  ipv6.map((t): [Value, string] => [{ kind: 'ip', text: t }, `from [${t}]:443`]),
  ipv6.map((t): [Value, string] => [{ kind: 'ip', text: t }, `src=${t} ok`]),
  email.map((t): [Value, string] => [{ kind: 'email', text: t }, `to=<${t}>`]),
  email.map((t): [Value, string] => [{ kind: 'email', text: t }, `"email":"${t}"`]),
  userName.map((t): [Value, string] => [{ kind: 'user', text: t }, `user=${t}`]),
  userName.map((t): [Value, string] => [{ kind: 'user', text: t }, `"username": "${t}"`]),
  fc.tuple(userName, ipv4).map(([u, a]): [Value[], string] => [
    [
      { kind: 'user', text: u },
      { kind: 'ip', text: a },
    ],
    `for ${u} from ${a}`,
  ]),
  userName.map((t): [Value, string] => [{ kind: 'user', text: t }, `session opened for user ${t}(uid=1000)`]),
  hostName.map((t): [Value, string] => [{ kind: 'host', text: t }, `host=${t}`]),
  hostName.map((t): [Value, string] => [{ kind: 'host', text: t }, `"hostname":"${t}"`]),
);
const filler = fc.constantFrom(
  'time=2026-11-28T05:00:00.000Z level=INFO msg="exec observed"',
  'pid=4242 ppid=1 comm=bash',
  'level=WARN msg="retrying"',
  '{"level":"INFO","msg":"ok","n":12}',
  'listening on 127.0.0.1:8080',
);
const line = fc.tuple(filler, fc.array(placed, { minLength: 0, maxLength: 4 }), filler);
const member = fc.array(line, { minLength: 1, maxLength: 12 });
const fractions = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 });

function render(lines: [string, [Value | Value[], string][], string][]): { text: string; values: Value[] } {
  const values: Value[] = [];
  const text = lines
    .map(([a, items, b]) => {
      for (const [v] of items) values.push(...(Array.isArray(v) ? v : [v]));
      return [a, ...items.map(([, s]) => s), b].join(' ');
    })
    .join('\n');
  return { text: `${text}\n`, values };
}

/** A value as it is compared for one token: case-insensitive but for user names. */
function norm(v: Value): string {
  return `${v.kind}:${v.kind === 'user' ? v.text : v.text.toLowerCase()}`;
}

describe('obfuscation properties (fast-check)', () => {
  it('is consistent across members, reversible with reveal, and leaves no original value', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(member, fractions), { minLength: 1, maxLength: 3 }), async (members) => {
        const obfuscator = new Obfuscator();
        const rendered = members.map(([lines, cuts]) => ({ ...render(lines), cuts }));
        const outputs: string[] = [];
        for (const m of rendered) {
          const bytes = Buffer.from(m.text, 'latin1');
          outputs.push((await run(new ObfuscateStream(obfuscator), cut(bytes, m.cuts))).toString('latin1'));
        }
        const map = obfuscator.map();
        // Never leaves an original value of the four kinds.
        const all = outputs.join('\n');
        for (const m of rendered)
          for (const v of m.values) assert.ok(!all.includes(v.text), `${v.kind} ${v.text} survived`);
        // Consistent: each distinct value has exactly one token, of its kind, in every member.
        const tokens = new Map<string, string>();
        for (const [token, original] of Object.entries(map)) {
          const kind = token.slice(0, token.lastIndexOf('-')) as Value['kind'];
          const key = norm({ kind, text: original });
          assert.ok(!tokens.has(key), `${key} has two tokens`);
          tokens.set(key, token);
        }
        const distinct = new Set(rendered.flatMap((m) => m.values.map(norm)));
        assert.deepEqual(new Set(tokens.keys()), distinct);
        // Reversible: reveal gives back every member exactly.
        const reveal = new Map(Object.entries(map));
        for (const [i, m] of rendered.entries()) {
          const back = await run(new RevealStream(reveal), cut(Buffer.from(outputs[i], 'latin1'), m.cuts));
          assert.equal(back.toString('latin1'), m.text);
        }
      }),
      { numRuns: 300 },
    );
  });
});
