import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { emailDomain, identityOf } from './claims.ts';

const DOMAINS = ['acme.test', 'acme-labs.test'];

describe('OIDC claims policy', () => {
  it('a verified email of a connection domain signs in, with its groups', () => {
    assert.deepEqual(
      identityOf({ email: 'ada@acme.test', email_verified: true, groups: ['guard-admins', 'eng'] }, DOMAINS),
      { email: 'ada@acme.test', groups: ['guard-admins', 'eng'] },
    );
  });

  it('the domain is compared without case', () => {
    assert.deepEqual(identityOf({ email: 'Ada@ACME-Labs.test', email_verified: true }, DOMAINS), {
      email: 'Ada@ACME-Labs.test',
      groups: undefined,
    });
  });

  it('a missing or malformed email is refused as missing', () => {
    for (const email of [undefined, 42, '', 'no-at-sign', 'trailing@', '@acme.test', `${'a'.repeat(250)}@acme.test`])
      assert.deepEqual(
        identityOf({ email, email_verified: true }, DOMAINS),
        { refused: 'email_missing' },
        String(email),
      );
  });

  it('an unverified or unstated email is refused', () => {
    for (const email_verified of [false, undefined, 'true', 1])
      assert.deepEqual(identityOf({ email: 'ada@acme.test', email_verified }, DOMAINS), {
        refused: 'email_unverified',
      });
  });

  it("Entra ID's xms_edov stands for an absent email_verified, never against a false one", () => {
    assert.deepEqual(identityOf({ email: 'ada@acme.test', xms_edov: true }, DOMAINS), {
      email: 'ada@acme.test',
      groups: undefined,
    });
    assert.deepEqual(identityOf({ email: 'ada@acme.test', xms_edov: false }, DOMAINS), { refused: 'email_unverified' });
    assert.deepEqual(identityOf({ email: 'ada@acme.test', email_verified: false, xms_edov: true }, DOMAINS), {
      refused: 'email_unverified',
    });
  });

  it('an email of another domain is refused, subdomains included', () => {
    for (const email of ['ada@evil.test', 'ada@sub.acme.test', 'ada@acme.test.evil.test'])
      assert.deepEqual(identityOf({ email, email_verified: true }, DOMAINS), { refused: 'wrong_domain' }, email);
  });

  it('groups that are not a list of strings count as not sent', () => {
    for (const groups of ['guard-admins', [1, 2], [null], { 0: 'x' }, ['x'.repeat(600)]])
      assert.equal(
        (identityOf({ email: 'ada@acme.test', email_verified: true, groups }, DOMAINS) as { groups?: unknown }).groups,
        undefined,
      );
  });

  it('emailDomain takes what follows the last @', () => {
    assert.equal(emailDomain('"a@b"@Acme.test'), 'acme.test');
    assert.equal(emailDomain('ada'), undefined);
  });
});
