import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadServerConfig, parseServerArgs, SETTINGS } from './config.ts';
import { tracingConfig } from './tracing/settings.ts';
import { LEASE_MARGIN_MS } from './webhooks/settings.ts';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(os.tmpdir(), 'guard-config-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function configFile(name: string, yaml: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, yaml);
  return path;
}

function load(flags: Record<string, string | boolean> = {}, env: NodeJS.ProcessEnv = {}) {
  return loadServerConfig(flags, env, dir);
}

function refused(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (error: Error) => {
    assert.ok(error instanceof ConfigError, `not a ConfigError: ${error}`);
    assert.match(error.message, pattern);
    return true;
  });
}

describe('server configuration', () => {
  it('the defaults are those of DESIGN §8: 127.0.0.1:8080, ./data, no public URL', () => {
    const c = load();
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.port, 8080);
    assert.equal(c.dataDir, join(dir, 'data'));
    assert.equal(c.publicUrl, undefined);
    assert.equal(c.webhookAllowPrivate, false);
    assert.deepEqual(c.metricsListen, { host: '127.0.0.1', port: 9464, explicit: false });
    assert.ok(c.webhook.leaseMs >= c.webhook.timeoutMs + LEASE_MARGIN_MS, 'the defaults contradict each other');
  });

  it('a flag wins over the environment, which wins over the config file', async () => {
    const file = await configFile('precedence.yaml', 'listen: 127.0.0.1:1001\nlog_level: debug\nmax_uploads: 5\n');
    const fileOnly = load({ config: file });
    assert.equal(fileOnly.port, 1001);
    assert.equal(fileOnly.logLevel, 'debug');
    assert.equal(fileOnly.limits.maxUploads, 5);
    const envOverFile = load({ config: file }, { GUARD_SERVER_LISTEN: '127.0.0.1:1002' });
    assert.equal(envOverFile.port, 1002);
    assert.equal(envOverFile.logLevel, 'debug', 'a setting the environment does not name still comes from the file');
    const flagOverEnv = load({ config: file, listen: '127.0.0.1:1003' }, { GUARD_SERVER_LISTEN: '127.0.0.1:1002' });
    assert.equal(flagOverEnv.port, 1003);
  });

  it('GUARD_SERVER_CONFIG names the config file when --config does not', async () => {
    const file = await configFile('by-env.yaml', 'listen: 127.0.0.1:1004\n');
    assert.equal(load({}, { GUARD_SERVER_CONFIG: file }).port, 1004);
  });

  it('every setting has a flag, an environment variable and a file key, each unique', () => {
    for (const field of ['key', 'flag', 'env', 'file'] as const) {
      const names = SETTINGS.map((s) => s[field]);
      assert.equal(new Set(names).size, names.length, `duplicate ${field}`);
    }
    for (const s of SETTINGS) {
      assert.match(s.env, /^GUARD_SERVER_[A-Z0-9_]+$/);
      assert.match(s.file, /^[a-z0-9_]+$/);
    }
  });

  it('an unknown key in the config file is an error naming it, with the key it is nearest to', async () => {
    const typo = await configFile('typo.yaml', 'listen: 127.0.0.1:8080\nmax_upload: 4\n');
    refused(() => load({ config: typo }), /typo\.yaml: unknown key "max_upload" \(did you mean "max_uploads"\?\)/);
    const dashed = await configFile('dashed.yaml', 'data-dir: /tmp/x\n');
    refused(() => load({ config: dashed }), /unknown key "data-dir" \(did you mean "data_dir"\?\)/);
    const unrelated = await configFile('unrelated.yaml', 'colour: blue\n');
    refused(() => load({ config: unrelated }), /unknown key "colour"; the keys are listed in docs\/guard-server\.md$/);
  });

  it('a list or a mapping where a setting takes one value is refused, naming the key', async () => {
    const list = await configFile('list.yaml', 'max_uploads: [1, 2]\n');
    refused(() => load({ config: list }), /max_uploads must be a single value/);
    const map = await configFile('map.yaml', 'listen:\n  host: 127.0.0.1\n');
    refused(() => load({ config: map }), /listen must be a single value/);
  });

  it('a key with no value in the file is as if absent', async () => {
    const file = await configFile('empty-value.yaml', 'public_url:\n');
    assert.equal(load({ config: file }).publicUrl, undefined);
  });

  it('a file that is not a YAML mapping, or not YAML, or not there, is refused', async () => {
    refused(() => load({ config: join(dir, 'missing.yaml') }), /missing\.yaml: ENOENT/);
    const scalar = await configFile('scalar.yaml', '42\n');
    refused(() => load({ config: scalar }), /must be a YAML mapping/);
    const sequence = await configFile('seq.yaml', '- a\n- b\n');
    refused(() => load({ config: sequence }), /must be a YAML mapping/);
    const broken = await configFile('broken.yaml', 'a: [\n');
    refused(() => load({ config: broken }), /broken\.yaml: /);
  });

  it('listen takes HOST:PORT, IPv6 in brackets, and refuses a port over 65535', () => {
    assert.deepEqual([load({ listen: '[::1]:9000' }).host, load({ listen: '[::1]:9000' }).port], ['::1', 9000]);
    assert.equal(load({ listen: '0.0.0.0:0' }).port, 0);
    refused(() => load({ listen: 'localhost' }), /listen must be HOST:PORT/);
    refused(() => load({ listen: '127.0.0.1:65536' }), /listen must be HOST:PORT/);
  });

  it('the public URL is an http(s) URL without credentials, query or fragment; a trailing slash is dropped', () => {
    assert.equal(load({ 'public-url': 'https://guard.example.com/' }).publicUrl, 'https://guard.example.com');
    assert.equal(load({ 'public-url': 'https://example.com/guard//' }).publicUrl, 'https://example.com/guard');
    for (const bad of [
      'guard.example.com',
      'ftp://example.com',
      'https://u:p@example.com',
      'https://e.com/?a=1',
      'https://e.com/#x',
    ])
      refused(() => load({ 'public-url': bad }), /public URL must be/);
  });

  it('numbers are whole and in range, and every refusal names the flag, the variable and the file key', () => {
    const cases: [string, string, RegExp][] = [
      ['webhook-concurrency', '0', /--webhook-concurrency \(GUARD_SERVER_WEBHOOK_CONCURRENCY, webhook_concurrency\)/],
      ['webhook-timeout-ms', '99', /--webhook-timeout-ms .* from 100 to 3600000, got "99"/],
      ['webhook-lease-ms', '1.5', /--webhook-lease-ms /],
      ['webhook-poll-ms', 'often', /--webhook-poll-ms /],
      ['max-bundle-bytes', '0', /--max-bundle-bytes /],
      ['gc-interval', '86401', /--gc-interval .* from 1 to 86400/],
      ['webhook-disable-after', '', /--webhook-disable-after /],
    ];
    for (const [flag, value, pattern] of cases) refused(() => load({ [flag]: value }), pattern);
    refused(
      () => load({}, { GUARD_SERVER_WEBHOOK_ALLOW_PRIVATE: 'yes' }),
      /--webhook-allow-private \(GUARD_SERVER_WEBHOOK_ALLOW_PRIVATE, webhook_allow_private\) must be true or false/,
    );
    refused(
      () => load({ 'log-level': 'verbose' }),
      /log level must be one of fatal, error, warn, info, debug, trace, silent/,
    );
  });

  it('the retry schedule reads durations and refuses an empty or unreadable one', () => {
    assert.deepEqual(
      load({ 'webhook-retry-schedule': '0,200ms,5s,2m,1h' }).webhook.retrySchedule,
      [0, 200, 5000, 120_000, 3_600_000],
    );
    refused(() => load({ 'webhook-retry-schedule': 'soon' }), /webhook retry schedule: /);
  });

  describe('settings that contradict each other are refused at start, naming both', () => {
    it('a lease shorter than the delivery timeout plus the margin (two attempts of one delivery at once)', () => {
      refused(
        () => load({ 'webhook-timeout-ms': '15000', 'webhook-lease-ms': '10000' }),
        /--webhook-lease-ms .* is 10000 ms, but must be at least --webhook-timeout-ms .* \(15000 ms\) plus 5 s: .*second attempt/,
      );
      refused(
        () => load({ 'webhook-timeout-ms': '15000', 'webhook-lease-ms': String(15000 + LEASE_MARGIN_MS - 1) }),
        /lease/,
      );
      const ok = load({ 'webhook-timeout-ms': '15000', 'webhook-lease-ms': String(15000 + LEASE_MARGIN_MS) });
      assert.equal(ok.webhook.leaseMs, 20000);
    });

    it('not a cap above its total: the total binds first', () => {
      const c = load({ 'max-uploads': '4', 'webhook-concurrency': '8' });
      assert.deepEqual([c.limits.maxUploads, c.limits.maxUploadsPerTenant], [4, 8]);
      assert.deepEqual([c.webhook.concurrency, c.webhook.perEndpointConcurrency], [8, 16]);
    });

    it('/metrics on the address of the API', () => {
      refused(
        () => load({ listen: '127.0.0.1:9000', 'metrics-listen': '127.0.0.1:9000' }),
        /--metrics-listen .* is the same address as --listen/,
      );
    });
  });

  describe('parseServerArgs', () => {
    it('reads flags, booleans and positionals', () => {
      const { values, positionals } = parseServerArgs(['serve', '--listen', '127.0.0.1:1', '--webhook-allow-private']);
      assert.deepEqual(positionals, ['serve']);
      assert.equal(values.listen, '127.0.0.1:1');
      assert.equal(values['webhook-allow-private'], true);
    });

    it('refuses an unknown flag, a missing value and a value given to a boolean, in its own words', () => {
      refused(() => parseServerArgs(['--lisen', 'x']), /^unknown option --lisen$/);
      refused(() => parseServerArgs(['--listen']), /^--listen needs a value$/);
      refused(() => parseServerArgs(['--listen', '--data-dir', 'd']), /^--listen needs a value$/);
      refused(() => parseServerArgs(['--webhook-allow-private=yes']), /^--webhook-allow-private takes no value$/);
    });
  });
});

describe('tracing from the standard OTEL_* variables', () => {
  it('is off by default, with none, and with OTEL_SDK_DISABLED=true', () => {
    assert.equal(tracingConfig({}), undefined);
    assert.equal(
      tracingConfig({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }),
      undefined,
    );
    assert.equal(tracingConfig({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }), undefined);
  });

  it('is on with OTEL_TRACES_EXPORTER=otlp, or with only an OTLP endpoint set; protobuf to <endpoint>/v1/traces by default', () => {
    const on = tracingConfig({ OTEL_TRACES_EXPORTER: 'otlp' });
    assert.equal(on?.url, 'http://localhost:4318/v1/traces');
    assert.equal(on?.protocol, 'http/protobuf');
    assert.equal(on?.serviceName, 'guard-server');
    assert.equal(on?.sampler, 'parentbased_always_on');
    const viaEndpoint = tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example:4318/' });
    assert.equal(viaEndpoint?.url, 'https://collector.example:4318/v1/traces');
    const specific = tracingConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/custom',
    });
    assert.equal(specific?.url, 'http://b:4318/custom', 'the signal-specific endpoint is used as given');
  });

  it('reads headers, timeout, service name, resource attributes, sampler and batch settings', () => {
    const c = tracingConfig({
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'api-key=a%20b,x=1',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x=2',
      OTEL_EXPORTER_OTLP_TIMEOUT: '2500',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,service.name=from-attrs',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    assert.equal(c?.protocol, 'http/json');
    assert.deepEqual(c?.headers, { 'api-key': 'a b', x: '2' });
    assert.equal(c?.timeoutMs, 2500);
    assert.equal(c?.serviceName, 'from-attrs');
    assert.equal(c?.resourceAttributes['deployment.environment'], 'prod');
    assert.equal(c?.sampler, 'parentbased_traceidratio');
    assert.equal(c?.samplerRatio, 0.25);
    assert.equal(c?.batch.scheduleDelayMs, 100);
    assert.equal(tracingConfig({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SERVICE_NAME: 'named' })?.serviceName, 'named');
  });

  it('refuses what it cannot do, naming the variable: other exporters, gRPC, bad values', () => {
    assert.throws(() => tracingConfig({ OTEL_TRACES_EXPORTER: 'zipkin' }), /OTEL_TRACES_EXPORTER.*otlp/);
    assert.throws(
      () => tracingConfig({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
      /OTEL_EXPORTER_OTLP_PROTOCOL.*http\/protobuf/,
    );
    assert.throws(
      () => tracingConfig({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER: 'sometimes' }),
      /OTEL_TRACES_SAMPLER/,
    );
    assert.throws(
      () =>
        tracingConfig({
          OTEL_TRACES_EXPORTER: 'otlp',
          OTEL_TRACES_SAMPLER: 'traceidratio',
          OTEL_TRACES_SAMPLER_ARG: '2',
        }),
      /OTEL_TRACES_SAMPLER_ARG/,
    );
    assert.throws(() => tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://x' }), /OTEL_EXPORTER_OTLP_ENDPOINT/);
    assert.throws(
      () => tracingConfig({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_HEADERS: 'novalue' }),
      /HEADERS/,
    );
  });

  it('is read by loadServerConfig from the environment it is given', () => {
    assert.equal(loadServerConfig({}, {}, '/tmp').tracing, undefined);
    assert.ok(loadServerConfig({}, { OTEL_TRACES_EXPORTER: 'otlp' }, '/tmp').tracing);
  });
});

describe('delivery retention settings', () => {
  it('are 30 days by default and at most 90; a default above the maximum is refused', () => {
    assert.deepEqual(loadServerConfig({}, {}, '/tmp').deliveryRetention, { defaultDays: 30, maxDays: 90 });
    assert.throws(
      () => loadServerConfig({ 'delivery-retention-days': '120' }, {}, '/tmp'),
      /--delivery-retention-days .* more than --delivery-retention-max-days/,
    );
    assert.deepEqual(
      loadServerConfig({ 'delivery-retention-days': '120', 'delivery-retention-max-days': '365' }, {}, '/tmp')
        .deliveryRetention,
      { defaultDays: 120, maxDays: 365 },
    );
  });
});

describe('the PostgreSQL password', () => {
  const url = 'postgres://guard@db.internal:5432/guard';
  it('comes from the URL, else --database-password-file (its first line), else PGPASSWORD', async () => {
    const secret = join(dir, 'postgres_password');
    await writeFile(secret, 's3cret pass\nignored\n');
    const load = (env: NodeJS.ProcessEnv) => {
      const c = loadServerConfig({}, { GUARD_SERVER_DATABASE: url, ...env }, dir).database;
      return c.engine === 'postgres' ? c.password : undefined;
    };
    assert.equal(load({ PGPASSWORD: 'from-env' }), 'from-env');
    assert.equal(load({ GUARD_SERVER_DATABASE_PASSWORD_FILE: secret, PGPASSWORD: 'from-env' }), 's3cret pass');
    assert.equal(
      load({
        GUARD_SERVER_DATABASE: 'postgres://guard:in%20url@db:5432/guard',
        GUARD_SERVER_DATABASE_PASSWORD_FILE: secret,
      }),
      'in url',
    );
  });
  it('an unreadable or empty password file is a configuration error naming it', async () => {
    const empty = join(dir, 'empty_password');
    await writeFile(empty, '\n');
    for (const [file, message] of [
      [join(dir, 'absent'), /--database-password-file.*absent cannot be read/],
      [empty, /--database-password-file.*empty_password is empty/],
    ] as const)
      assert.throws(
        () => loadServerConfig({}, { GUARD_SERVER_DATABASE: url, GUARD_SERVER_DATABASE_PASSWORD_FILE: file }, dir),
        (e: unknown) => e instanceof ConfigError && message.test(e.message),
      );
  });
});
