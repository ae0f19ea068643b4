// The SAML round trip, SP-initiated only (issue 22, item 4):
//   start  the email's domain names the tenant's connection; an AuthnRequest (HTTP-Redirect
//          binding) goes to its single sign-on URL, its ID kept as a 'saml' flow (10 min)
//          holding the tenant, in the database so any replica takes the answer;
//   acs    the IdP posts a SAMLResponse back. Its InResponseTo must be a live flow, taken once
//          (the flow, not the request, says which tenant's certificates verify it: a response
//          is never checked against a connection it was not asked of); the assertion must be
//          signed by one of those certificates (@node-saml/node-saml, wantAssertionsSigned),
//          for our entity ID (audience), from the connection's IdP entity ID (issuer), to our
//          ACS URL (recipient), within its time window (60 s of skew, by the server's clock)
//          and seen for the first time (its ID recorded until it expires: a replay is refused
//          on every replica). A response without InResponseTo (IdP-initiated) is refused: it
//          could be one captured and posted to someone else's browser.
// Then the email (NameID of format emailAddress, or the configured attribute) must be of one of
// the connection's domains, and ssoMember makes the user as OpenID Connect does.

import {
  type CacheProvider,
  type IdpCertCallback,
  type Profile,
  SAML,
  ValidateInResponseTo,
} from '@node-saml/node-saml';
import { type AuthFlows, type Flow, newSsoBinding, normaliseEmail } from '../../auth/index.ts';
import type { Db } from '../../db/index.ts';
import { ApiError } from '../../kernel/errors.ts';
import { type SsoMember, ssoMember } from '../members.ts';
import type { SamlConnection, SamlConnections } from './connections-repository.ts';
import { NAME_ID_EMAIL, type ServiceProvider, serviceProvider } from './service-provider.ts';

/** An AuthnRequest is answered within this, or its flow is gone. */
export const SAML_REQUEST_TTL_MS = 10 * 60_000;
/** Clocks of the IdP and the server may differ by this much. */
export const SAML_CLOCK_SKEW_MS = 60_000;
/** A SAMLResponse (base64) is at most this long: assertions with many groups stay far below. */
export const SAML_RESPONSE_MAX_CHARS = 256 * 1024;

export interface SamlSignInDeps {
  db: Db;
  now: () => Date;
  publicUrl: () => string;
  flows: AuthFlows;
  connections: SamlConnections;
}

/** A sign-in refused: `code` goes to the console (?sso_error=), `reason` to the log only. */
export class SamlRefused extends Error {
  readonly code: string;
  constructor(code: string, reason: string) {
    super(reason);
    this.name = 'SamlRefused';
    this.code = code;
  }
}

function samlClient(
  sp: ServiceProvider,
  options: { entryPoint?: string; idpCert: string[] | IdpCertCallback; cacheProvider: CacheProvider },
): SAML {
  return new SAML({
    issuer: sp.entity_id,
    callbackUrl: sp.acs_url,
    audience: sp.entity_id,
    entryPoint: options.entryPoint,
    idpCert: options.idpCert,
    identifierFormat: NAME_ID_EMAIL,
    disableRequestedAuthnContext: true,
    // The assertion itself must be signed; a signature over the whole response alone is not enough.
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    // Times are checked below by the server's clock (the same clock as the flows'), not the library's.
    acceptedClockSkewMs: -1,
    validateInResponseTo: ValidateInResponseTo.ifPresent,
    requestIdExpirationPeriodMs: SAML_REQUEST_TTL_MS,
    cacheProvider: options.cacheProvider,
  });
}

/**
 * The IdP URL an AuthnRequest for this email goes to (its request ID kept as a flow), and the
 * binding the browser keeps as its guard_sso cookie (only its holder finishes the sign-in).
 */
export async function startSamlSignIn(
  deps: SamlSignInDeps,
  rawEmail: string,
): Promise<{ to: string; binding: string }> {
  const email = normaliseEmail(rawEmail);
  const domain = email.slice(email.lastIndexOf('@') + 1);
  const tenantId = await deps.connections.tenantOfDomain(domain);
  const connection = tenantId === undefined ? undefined : await deps.connections.ofTenant(tenantId);
  if (!connection) throw new SamlRefused('sso_not_configured', `no SAML connection for the domain ${domain}`);
  const { binding, hash } = newSsoBinding();
  const saml = samlClient(serviceProvider(deps.publicUrl()), {
    entryPoint: connection.sso_url,
    idpCert: connection.idp_certificates,
    cacheProvider: {
      // node-saml hands us the new request's ID here, before it builds the URL.
      saveAsync: async (key, value) => {
        await deps.flows.start('saml', {
          key,
          tenantId: connection.tenantId,
          data: { binding_hash: hash },
          ttlMs: SAML_REQUEST_TTL_MS,
        });
        return { value, createdAt: deps.now().getTime() };
      },
      getAsync: async () => null,
      removeAsync: async () => null,
    },
  });
  return { to: await saml.getAuthorizeUrlAsync('', undefined, {}), binding };
}

// biome-ignore lint/suspicious/noExplicitAny: node-saml's parsed assertion (xml2js: `$` attributes, `_` text)
type XmlNode = any;

const attr = (node: XmlNode, name: string): string | undefined => {
  const v = node?.$?.[name];
  return typeof v === 'string' ? v : undefined;
};

const instant = (text: string | undefined): number | undefined => {
  if (text === undefined) return undefined;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw new SamlRefused('invalid_response', `unreadable time ${text.slice(0, 40)}`);
  return ms;
};

/** Attribute values as strings (a single value or several). */
function values(profile: Profile, name: string): string[] | undefined {
  const v = (profile.attributes as Record<string, unknown> | undefined)?.[name];
  if (v === undefined) return undefined;
  return (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string');
}

export interface SamlSignedIn {
  member: SsoMember;
  tenantId: string;
  /** The SHA-256 of the binding of the browser that started it. */
  bindingHash: string;
}

/** Checks a posted SAMLResponse and returns the user it signs in; SamlRefused (or user_deactivated) otherwise. */
export async function consumeSamlResponse(deps: SamlSignInDeps, samlResponse: string): Promise<SamlSignedIn> {
  const sp = serviceProvider(deps.publicUrl());
  let requestId: string | undefined;
  let flow: Flow | undefined;
  let connection: SamlConnection | undefined;
  let failure: unknown;
  const saml = samlClient(sp, {
    cacheProvider: {
      saveAsync: async () => null,
      // Asked first for the response's InResponseTo: the flow is taken then (used once, whatever
      // follows); asked again for the assertion's, which must be the same request.
      getAsync: async (key) => {
        try {
          if (requestId === undefined) {
            requestId = key;
            flow = await deps.flows.take('saml', key);
          }
          // Live by its flow's own expiry (take checked it); node-saml wants a creation time it
          // compares with its own clock, so it is told "now".
          return key === requestId && flow ? new Date().toISOString() : null;
        } catch (error) {
          failure = error;
          throw error;
        }
      },
      removeAsync: async () => null,
    },
    // Asked after the InResponseTo check: the certificates of the tenant the request was made for.
    idpCert: (callback) => {
      if (!flow?.tenantId) {
        failure = new SamlRefused('unsolicited_response', 'a response to no request (IdP-initiated) is refused');
        callback(failure as Error);
        return;
      }
      deps.connections.ofTenant(flow.tenantId).then(
        (c) => {
          connection = c;
          if (c) callback(null, c.idp_certificates);
          else {
            failure = new SamlRefused('sso_not_configured', 'the SAML connection was removed during the sign-in');
            callback(failure as Error);
          }
        },
        (error) => {
          failure = error;
          callback(error);
        },
      );
    },
  });

  let profile: Profile | null;
  try {
    ({ profile } = await saml.validatePostResponseAsync({ SAMLResponse: samlResponse }));
  } catch (error) {
    if (failure !== undefined) throw failure;
    if (requestId !== undefined && !flow)
      throw new SamlRefused(
        'unknown_request',
        'InResponseTo is no live request of this server (unknown, used or expired)',
      );
    throw new SamlRefused('invalid_response', `the SAML response was refused: ${(error as Error).message}`);
  }
  if (!profile || !connection || !flow?.tenantId || requestId === undefined)
    throw new SamlRefused('unsolicited_response', 'a response to no request (IdP-initiated) is refused');

  if (profile.issuer !== connection.idp_entity_id)
    throw new SamlRefused('wrong_issuer', `issuer ${String(profile.issuer).slice(0, 200)} is not the connection's IdP`);

  const assertion: XmlNode = (profile.getAssertion?.() as XmlNode)?.Assertion;
  const assertionId = attr(assertion, 'ID');
  if (!assertionId) throw new SamlRefused('invalid_response', 'the assertion has no ID');
  const now = deps.now().getTime();
  const expiries: number[] = [];
  const checkWindow = (node: XmlNode, where: string) => {
    const notBefore = instant(attr(node, 'NotBefore'));
    const notOnOrAfter = instant(attr(node, 'NotOnOrAfter'));
    if (notBefore !== undefined && now + SAML_CLOCK_SKEW_MS < notBefore)
      throw new SamlRefused('not_yet_valid', `${where} NotBefore is in the future`);
    if (notOnOrAfter !== undefined) {
      if (now - SAML_CLOCK_SKEW_MS >= notOnOrAfter)
        throw new SamlRefused('expired', `${where} NotOnOrAfter has passed`);
      expiries.push(notOnOrAfter);
    }
  };

  // The bearer confirmation: to our ACS URL, in answer to this request, in its time window.
  const confirmations: XmlNode[] = assertion?.Subject?.[0]?.SubjectConfirmation ?? [];
  const bearer = confirmations.filter((c) => attr(c, 'Method') === 'urn:oasis:names:tc:SAML:2.0:cm:bearer');
  if (bearer.length === 0)
    throw new SamlRefused('invalid_response', 'the assertion has no bearer subject confirmation');
  const data = bearer.map((c) => c.SubjectConfirmationData?.[0]);
  const confirmation = data.find((d) => attr(d, 'Recipient') === sp.acs_url);
  if (!confirmation)
    throw new SamlRefused(
      'wrong_recipient',
      `the assertion's recipient is not ${sp.acs_url}: check the ACS URL at the IdP`,
    );
  if (attr(confirmation, 'InResponseTo') !== requestId)
    throw new SamlRefused('unknown_request', "the assertion's InResponseTo is not the request it came with");
  if (attr(confirmation, 'NotOnOrAfter') === undefined)
    throw new SamlRefused('invalid_response', 'the subject confirmation has no NotOnOrAfter');
  checkWindow(confirmation, 'SubjectConfirmationData');
  const conditions = assertion?.Conditions;
  if (!Array.isArray(conditions) || conditions.length !== 1)
    throw new SamlRefused('invalid_response', 'the assertion has no Conditions');
  checkWindow(conditions[0], 'Conditions');

  // Seen once: the ID is kept until the assertion could no longer be accepted anyway.
  const keepUntil = new Date(Math.max(...expiries) + SAML_CLOCK_SKEW_MS);
  if (
    !(await deps.flows.once('saml_assertion', `${connection.idp_entity_id}\0${assertionId}`, keepUntil, flow.tenantId))
  )
    throw new SamlRefused('replayed_assertion', `assertion ${assertionId.slice(0, 100)} was already used`);

  const email = emailOf(profile, connection);
  const domain = email.slice(email.lastIndexOf('@') + 1);
  if (!connection.emailDomains.includes(domain))
    throw new SamlRefused('domain_not_allowed', `${domain} is not one of the connection's email domains`);
  const groups =
    connection.groups_attribute === null ? undefined : (values(profile, connection.groups_attribute) ?? []);
  try {
    const member = await ssoMember(
      deps,
      { tenantId: flow.tenantId, protocol: 'saml', adminGroup: connection.adminGroup },
      { email, groups },
    );
    return { member, tenantId: flow.tenantId, bindingHash: String(flow.data.binding_hash ?? '') };
  } catch (error) {
    if (error instanceof ApiError) throw new SamlRefused(error.code, error.message);
    throw error;
  }
}

/** The configured email attribute when it is sent, else a NameID of the emailAddress format. */
function emailOf(profile: Profile, connection: SamlConnection): string {
  const fromAttribute =
    connection.email_attribute === null ? undefined : values(profile, connection.email_attribute)?.[0];
  const fromNameId = profile.nameIDFormat === NAME_ID_EMAIL ? profile.nameID : undefined;
  const email = normaliseEmail(fromAttribute ?? fromNameId ?? '');
  if (!/^[^\s@]{1,64}@[^\s@]{1,253}$/.test(email))
    throw new SamlRefused(
      'no_email',
      connection.email_attribute === null
        ? 'the NameID is not an email address (format emailAddress)'
        : `neither the attribute ${connection.email_attribute} nor the NameID holds an email address`,
    );
  return email;
}
