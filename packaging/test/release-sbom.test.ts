// The CycloneDX SBOMs of the release (issue 23, sbom.ts): each is a CycloneDX 1.5 document
// with the required fields, unique bom-refs and a dependency graph that names only what the
// BOM holds, about the artefact it sits beside (its SHA-256). What they list is checked
// against the artefacts' contents, not against npm's own view: every npm package inside the
// server .deb is in its SBOM, and the runtime and exec probe carry the hashes of the files as
// shipped. With GUARD_RELEASE_ARTEFACTS=1 (release:build) the SBOMs checked are the release's
// own <artefact>.cdx.json, and SHA256SUMS lists each; otherwise they are written for the
// tests' builds.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AGENT_EXEC_PROBE } from '../build/exec-probe.ts';
import { DIST, nodeVersion, releaseVersion } from '../build/paths.ts';
import { type Bom, SBOM_CONTENTS, type SbomOptions, sha256File, writeSbom } from '../build/sbom.ts';
import {
  agentDeb,
  agentExecutable,
  listenPackage,
  RELEASE_ARTEFACTS,
  serverDeb,
  webhooksPackage,
} from './artefacts.ts';

const VERSION = releaseVersion();
const TYPES = [
  'application',
  'framework',
  'library',
  'container',
  'platform',
  'operating-system',
  'device',
  'firmware',
  'file',
  'data',
];
let tmp: string;

before(async () => {
  tmp = await mkdtemp(join(os.tmpdir(), 'guard-sbom-test-'));
});
after(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

/** The artefact's SBOM: the release's own file, or one written now for the tests' build. */
async function sbomOf(artefact: string, opts: SbomOptions): Promise<Bom> {
  const path = RELEASE_ARTEFACTS ? `${artefact}.cdx.json` : await writeSbom(artefact, opts);
  assert.ok(existsSync(path), `${path} is missing`);
  return JSON.parse(await readFile(path, 'utf8'));
}

/** The shape CycloneDX 1.5 requires, and what Guard's SBOMs promise on top. */
async function assertWellFormed(bom: Bom, artefact: string): Promise<void> {
  assert.equal(bom.bomFormat, 'CycloneDX');
  assert.equal(bom.specVersion, '1.5');
  assert.equal(bom.$schema, 'http://cyclonedx.org/schema/bom-1.5.schema.json');
  assert.match(bom.serialNumber, /^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(bom.version, 1);
  assert.ok(!Number.isNaN(Date.parse(bom.metadata.timestamp)), bom.metadata.timestamp);
  assert.ok(bom.metadata.tools.components.length > 0);
  const subject = bom.metadata.component;
  assert.equal(subject['bom-ref'], basename(artefact));
  assert.equal(subject.version, VERSION);
  assert.deepEqual(subject.hashes, [{ alg: 'SHA-256', content: await sha256File(artefact) }]);
  assert.deepEqual(subject.licenses, [{ license: { id: 'Apache-2.0' } }]);
  const all = [subject, ...bom.components];
  const refs = all.map((c) => c['bom-ref']);
  assert.equal(new Set(refs).size, refs.length, `duplicate bom-refs: ${refs.filter((r, i) => refs.indexOf(r) !== i)}`);
  for (const c of all) {
    assert.ok(TYPES.includes(c.type), `${c['bom-ref']}: type ${c.type}`);
    assert.ok(c.name && typeof c.name === 'string', `${c['bom-ref']}: name`);
    assert.ok(c.version && typeof c.version === 'string', `${c['bom-ref']}: version`);
    if (c !== subject || !artefact.endsWith('.image.tar')) assert.match(c.purl ?? '', /^pkg:[a-z]+\//, c['bom-ref']);
    for (const h of c.hashes ?? [])
      assert.match(h.content, h.alg === 'SHA-256' ? /^[0-9a-f]{64}$/ : /^[0-9a-f]{128}$/, c['bom-ref']);
    for (const l of c.licenses ?? []) assert.ok('license' in l || 'expression' in l, JSON.stringify(l));
  }
  const known = new Set(refs);
  const depRefs = bom.dependencies.map((d) => d.ref);
  assert.equal(new Set(depRefs).size, depRefs.length, 'one dependencies entry per ref');
  for (const d of bom.dependencies) {
    assert.ok(known.has(d.ref), `dependencies name ${d.ref}, which the BOM does not hold`);
    for (const on of d.dependsOn) assert.ok(known.has(on), `${d.ref} depends on ${on}, which the BOM does not hold`);
  }
  assert.ok(depRefs.includes(subject['bom-ref']), 'the artefact’s own dependencies are listed');
}

function component(bom: Bom, name: string) {
  return bom.components.find((c) => c.name === name);
}

/** name@version of every npm package directory inside a .deb (the files as dpkg installs them). */
async function npmPackagesInDeb(deb: string, under: string): Promise<Set<string>> {
  const dir = await mkdtemp(join(tmp, 'deb-'));
  execFileSync('sh', [
    '-c',
    'dpkg-deb --fsys-tarfile "$1" | tar -xf - -C "$2" --wildcards "$3/*package.json"',
    'sh',
    deb,
    dir,
    `.${under}`,
  ]);
  const listing = execFileSync('find', [join(dir, under), '-name', 'package.json', '-type', 'f'], { encoding: 'utf8' });
  const out = new Set<string>();
  for (const file of listing.split('\n').filter(Boolean)) {
    // Only a package's own manifest: node_modules/<name>/package.json or node_modules/@scope/<name>/package.json.
    if (!/\/node_modules\/(@[^/]+\/)?[^/@]+\/package\.json$/.test(file)) continue;
    const manifest = JSON.parse(await readFile(file, 'utf8'));
    if (manifest.name && manifest.version) out.add(`${manifest.name}@${manifest.version}`);
  }
  return out;
}

describe('the SBOMs of the release artefacts', () => {
  it('the server .deb: well formed, and every npm package inside it is listed, the runtime with the shipped file’s hash', async () => {
    const deb = await serverDeb();
    const bom = await sbomOf(deb, SBOM_CONTENTS.serverDeb);
    await assertWellFormed(bom, deb);
    const shipped = await npmPackagesInDeb(deb, '/usr/lib/guard-server/app/node_modules');
    assert.ok(shipped.size > 100, `${shipped.size} packages found in the .deb`);
    const listed = new Set(bom.components.map((c) => `${c.name}@${c.version}`));
    const missing = [...shipped].filter((p) => !listed.has(p));
    assert.deepEqual(missing, [], `in ${basename(deb)} but not in its SBOM`);
    for (const name of [
      '@guard/server',
      '@guard/contract',
      '@guard/webhooks',
      'fastify',
      'kysely',
      'commander',
      'yaml',
    ])
      assert.ok(component(bom, name), `${name} is not in the SBOM`);
    const node = component(bom, 'node');
    assert.equal(node?.version, nodeVersion());
    assert.equal(node?.purl, `pkg:generic/node@${nodeVersion()}`);
    const runtime = execFileSync(
      'sh',
      ['-c', 'dpkg-deb --fsys-tarfile "$1" | tar -xOf - ./usr/lib/guard-server/node', 'sh', deb],
      {
        maxBuffer: 512 << 20,
      },
    );
    assert.equal(node?.hashes?.[0]?.content, createHash('sha256').update(runtime).digest('hex'));
    const fastify = component(bom, 'fastify');
    assert.deepEqual(fastify?.licenses, [{ license: { id: 'MIT' } }]);
    assert.match(fastify?.purl ?? '', /^pkg:npm\/fastify@/);
    // npm's dependency graph comes along: the server depends on fastify.
    const server = component(bom, '@guard/server');
    const deps = bom.dependencies.find((d) => d.ref === server?.['bom-ref'])?.dependsOn ?? [];
    assert.ok(deps.includes(fastify?.['bom-ref'] as string), deps.join(' '));
  });

  it('the agent: the executable and the .deb list the agent’s production dependencies (commander and yaml too) and the runtime; the .deb its exec probe', async () => {
    const exe = await agentExecutable();
    const exeBom = await sbomOf(exe, SBOM_CONTENTS.agentExecutable);
    await assertWellFormed(exeBom, exe);
    const deb = await agentDeb();
    const probe = AGENT_EXEC_PROBE.built();
    const debBom = await sbomOf(deb, SBOM_CONTENTS.agentDeb(probe));
    await assertWellFormed(debBom, deb);
    for (const bom of [exeBom, debBom]) {
      for (const name of ['@guard/agent', '@guard/contract', 'commander', 'yaml', 'tar-stream', 'typebox', 'node'])
        assert.ok(component(bom, name), `${name} is not in the SBOM of ${bom.metadata.component.name}`);
      assert.ok(!component(bom, 'fastify'), 'the server’s dependencies are not the agent’s');
    }
    if (probe) {
      const helper = component(debBom, 'guard-exec-probe');
      const inDeb = execFileSync(
        'sh',
        ['-c', 'dpkg-deb --fsys-tarfile "$1" | tar -xOf - ./usr/lib/guard-agent/guard-exec-probe', 'sh', deb],
        { maxBuffer: 64 << 20 },
      );
      assert.equal(helper?.hashes?.[0]?.content, createHash('sha256').update(inDeb).digest('hex'));
      const statics = debBom.dependencies.find((d) => d.ref === helper?.['bom-ref'])?.dependsOn ?? [];
      assert.ok(
        statics.some((r) => r.startsWith('pkg:deb/debian/libbpf-dev@')),
        `the helper links libbpf statically: ${statics}`,
      );
    }
  });

  it('the SDK and guard listen tarballs: npm purls; the SDK has no dependency, guard listen lists what it bundles', async () => {
    const sdk = await webhooksPackage();
    const sdkBom = await sbomOf(sdk, SBOM_CONTENTS.webhooksPackage);
    await assertWellFormed(sdkBom, sdk);
    assert.equal(sdkBom.metadata.component.purl, `pkg:npm/%40guard/webhooks@${VERSION}`);
    assert.equal(sdkBom.metadata.component.name, '@guard/webhooks');
    assert.deepEqual(sdkBom.components, []);
    const listen = await listenPackage();
    const listenBom = await sbomOf(listen, SBOM_CONTENTS.listenPackage);
    await assertWellFormed(listenBom, listen);
    assert.equal(listenBom.metadata.component.purl, `pkg:npm/%40guard/listen@${VERSION}`);
    for (const name of ['commander', '@guard/webhooks', '@guard/contract'])
      assert.ok(component(listenBom, name), `${name} is not in guard listen’s SBOM`);
  });

  it('with the release: SHA256SUMS lists every artefact and its SBOM', { skip: !RELEASE_ARTEFACTS }, async () => {
    const sums = await readFile(join(DIST, 'SHA256SUMS'), 'utf8');
    const names = sums
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(/\s+/)[1]);
    for (const artefact of [
      await agentExecutable(),
      await agentDeb(),
      await serverDeb(),
      await webhooksPackage(),
      await listenPackage(),
    ])
      for (const file of [basename(artefact), `${basename(artefact)}.cdx.json`])
        assert.ok(names.includes(file), `${file} is not in SHA256SUMS`);
    for (const name of names.filter((n) => n.endsWith('.cdx.json')))
      assert.ok(names.includes(name.slice(0, -'.cdx.json'.length)), `${name} sits beside no listed artefact`);
  });
});
