// What an admin may configure as a SAML IdP: URLs, certificates and domains, checked before
// anything is stored (the API test covers the answers; these cover the rules case by case).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeTestTls } from '../../../test/loopback.ts';
import { makeSigningKey } from '../../../test/saml-idp.ts';
import { checkCertificates, checkDomains, checkSsoUrl, describeCertificate } from './connection-input.ts';

const refusedWith = (code: string) => (e: unknown) => (e as { code?: string }).code === code;

test('an sso_url is https, or http on a loopback address only', () => {
  assert.equal(checkSsoUrl('https://idp.example.com/sso/saml'), 'https://idp.example.com/sso/saml');
  assert.equal(checkSsoUrl('https://idp.example.com/app/x/sso?idp=1'), 'https://idp.example.com/app/x/sso?idp=1');
  for (const ok of ['http://127.0.0.1:8080/sso', 'http://localhost/sso', 'http://[::1]:9000/sso']) checkSsoUrl(ok);
  for (const bad of [
    'http://idp.example.com/sso',
    'http://10.0.0.5/sso',
    'ftp://127.0.0.1/sso',
    'javascript:alert(1)',
    'idp.example.com/sso',
    'https://user:pw@idp.example.com/sso',
    'https://idp.example.com/sso#x',
  ])
    assert.throws(() => checkSsoUrl(bad), refusedWith('invalid_sso_url'), bad);
});

test('email domains are lower-cased, kept once, and must be domain names', () => {
  assert.deepEqual(checkDomains(['Example.COM', 'example.com', ' sub.example.org ']), [
    'example.com',
    'sub.example.org',
  ]);
  for (const bad of ['localhost', 'exa mple.com', '-x.example.com', 'example.com.', '@example.com', 'a..b.com'])
    assert.throws(() => checkDomains([bad]), refusedWith('invalid_domain'), bad);
});

test('certificates: PEM or bare base64 DER with an RSA key, each kept once, in PEM', async () => {
  const [rsa, ec] = await Promise.all([makeSigningKey('Rotation IdP'), makeTestTls()]);
  const bare = rsa.cert.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, '');
  const pems = checkCertificates([rsa.cert, `  ${bare}\n`]);
  assert.equal(pems.length, 1, 'the same certificate twice is kept once');
  assert.equal(pems[0], rsa.cert.trim());
  assert.equal(describeCertificate(pems[0]).subject, 'CN=Rotation IdP');
  assert.match(describeCertificate(pems[0]).sha256_fingerprint, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
  for (const bad of [
    '',
    'hello',
    '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----',
    ec.cert,
    `${rsa.cert}\n${ec.cert}`,
  ])
    assert.throws(() => checkCertificates([bad]), refusedWith('invalid_certificate'));
});
