// A real SAML 2.0 identity provider for tests, on loopback: it takes an AuthnRequest by the
// HTTP-Redirect binding (base64 + raw DEFLATE, parsed as XML), and answers the way a browser
// sees an IdP answer, with an HTML page whose form posts a SAMLResponse to the request's ACS
// URL and submits itself. The response is signed with xml-crypto under an RSA key and a
// certificate made with openssl at start. Knobs (`next`) make the bad cases: an unsigned or
// tampered assertion, another IdP's key, a wrong audience or recipient, times out of window,
// no InResponseTo (IdP-initiated), a reused assertion ID.

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inflateRawSync } from 'node:zlib';
import { DOMParser } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';

const execFileP = promisify(execFile);

const NAME_ID_EMAIL = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';

export interface SigningKey {
  key: string;
  cert: string;
}

/** A fresh RSA key and a self-signed certificate for it, made with the openssl CLI. */
export async function makeSigningKey(cn = 'Test SAML IdP'): Promise<SigningKey> {
  const dir = await mkdtemp(join(os.tmpdir(), 'guard-test-saml-'));
  try {
    await execFileP('openssl', [
      ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem')],
      ...['-out', join(dir, 'cert.pem'), '-days', '30', '-subj', `/CN=${cn}`],
    ]);
    const [key, cert] = await Promise.all([
      readFile(join(dir, 'key.pem'), 'utf8'),
      readFile(join(dir, 'cert.pem'), 'utf8'),
    ]);
    return { key, cert };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** What the next response says and how it is signed; anything unset takes the request's or the IdP's value. */
export interface ResponseKnobs {
  email: string;
  /** The NameID format (default emailAddress). */
  nameIdFormat: string;
  /** Extra attributes, each a list of values. */
  attributes: Record<string, string[]>;
  audience: string;
  recipient: string;
  /** null: no InResponseTo anywhere (an IdP-initiated response). */
  inResponseTo: string | null;
  issuer: string;
  assertionId: string;
  /** NotBefore / NotOnOrAfter relative to the IdP's clock (ms). */
  notBeforeMs: number;
  notOnOrAfterMs: number;
  /** What is signed: the assertion (as IdPs do), only the outer response, or nothing. */
  sign: 'assertion' | 'response' | 'none';
  /** Signs with this key instead of the IdP's own (another IdP's). */
  signingKey: SigningKey;
  /** Changes the XML after it was signed. */
  tamper: (xml: string) => string;
}

export interface AuthnRequestSeen {
  id: string;
  acsUrl: string;
  issuer: string;
  relayState: string | undefined;
}

export interface SamlIdp {
  /** http://<host>:<port> */
  url: string;
  /** The single sign-on URL to configure (HTTP-Redirect binding). */
  ssoUrl: string;
  entityId: string;
  signing: SigningKey;
  /** Who signs in at the IdP (a real IdP would ask for a password). */
  user: { email: string; groups?: string[] };
  /** Knobs for the next response only. */
  next: Partial<ResponseKnobs>;
  /** The AuthnRequests received, in order. */
  requests: AuthnRequestSeen[];
  /** A SAMLResponse (base64) for a request, or for none (IdP-initiated), with these knobs. */
  respond(request: AuthnRequestSeen | undefined, knobs?: Partial<ResponseKnobs>): string;
  close(): Promise<void>;
}

const escapeXml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const newSamlId = () => `_${randomBytes(16).toString('hex')}`;

function sign(xml: string, key: SigningKey, elementName: 'Assertion' | 'Response'): string {
  const sig = new SignedXml({
    privateKey: key.key,
    publicCert: key.cert,
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  });
  const element = `//*[local-name(.)='${elementName}']`;
  sig.addReference({
    xpath: element,
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
  });
  // The signature goes right after the element's own Issuer (the SAML schema's order).
  sig.computeSignature(xml, {
    location: { reference: `${element}/*[local-name(.)='Issuer']`, action: 'after' },
  });
  return sig.getSignedXml();
}

/** Starts the IdP; `now` is its clock (the server's, so that time windows are exact). */
export async function startSamlIdp(
  options: { now: () => Date; host?: string; entityId?: string } = { now: () => new Date() },
): Promise<SamlIdp> {
  const signing = await makeSigningKey();
  const requests: AuthnRequestSeen[] = [];

  const respond = (request: AuthnRequestSeen | undefined, knobs: Partial<ResponseKnobs> = {}): string => {
    const now = options.now();
    const at = (ms: number) => new Date(now.getTime() + ms).toISOString();
    const email = knobs.email ?? idp.user.email;
    const issuer = knobs.issuer ?? idp.entityId;
    const acs = request?.acsUrl ?? knobs.recipient ?? '';
    const recipient = knobs.recipient ?? acs;
    const audience = knobs.audience ?? request?.issuer ?? '';
    const inResponseTo = knobs.inResponseTo === undefined ? request?.id : (knobs.inResponseTo ?? undefined);
    const irt = inResponseTo === undefined ? '' : ` InResponseTo="${escapeXml(inResponseTo)}"`;
    const attributes: Record<string, string[]> = {
      ...(idp.user.groups ? { groups: idp.user.groups } : {}),
      ...knobs.attributes,
    };
    const attributeXml = Object.entries(attributes)
      .map(
        ([name, values]) =>
          `<saml:Attribute Name="${escapeXml(name)}">${values
            .map((v) => `<saml:AttributeValue>${escapeXml(v)}</saml:AttributeValue>`)
            .join('')}</saml:Attribute>`,
      )
      .join('');
    const assertion =
      `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${escapeXml(knobs.assertionId ?? newSamlId())}" Version="2.0" IssueInstant="${at(0)}">` +
      `<saml:Issuer>${escapeXml(issuer)}</saml:Issuer>` +
      '<saml:Subject>' +
      `<saml:NameID Format="${escapeXml(knobs.nameIdFormat ?? NAME_ID_EMAIL)}">${escapeXml(email)}</saml:NameID>` +
      '<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">' +
      `<saml:SubjectConfirmationData${irt} NotOnOrAfter="${at(knobs.notOnOrAfterMs ?? 5 * 60_000)}" Recipient="${escapeXml(recipient)}"/>` +
      '</saml:SubjectConfirmation>' +
      '</saml:Subject>' +
      `<saml:Conditions NotBefore="${at(knobs.notBeforeMs ?? -30_000)}" NotOnOrAfter="${at(knobs.notOnOrAfterMs ?? 5 * 60_000)}">` +
      `<saml:AudienceRestriction><saml:Audience>${escapeXml(audience)}</saml:Audience></saml:AudienceRestriction>` +
      '</saml:Conditions>' +
      `<saml:AuthnStatement AuthnInstant="${at(0)}" SessionIndex="${newSamlId()}">` +
      '<saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext>' +
      '</saml:AuthnStatement>' +
      (attributeXml ? `<saml:AttributeStatement>${attributeXml}</saml:AttributeStatement>` : '') +
      '</saml:Assertion>';
    const key = knobs.signingKey ?? signing;
    const sign_ = knobs.sign ?? 'assertion';
    const signedAssertion = sign_ === 'assertion' ? sign(assertion, key, 'Assertion') : assertion;
    let response =
      `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${newSamlId()}" Version="2.0" IssueInstant="${at(0)}" Destination="${escapeXml(acs)}"${irt}>` +
      `<saml:Issuer>${escapeXml(issuer)}</saml:Issuer>` +
      '<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>' +
      signedAssertion.replace(/^<\?xml[^>]*\?>/, '') +
      '</samlp:Response>';
    if (sign_ === 'response') response = sign(response, key, 'Response');
    if (knobs.tamper) response = knobs.tamper(response);
    return Buffer.from(response, 'utf8').toString('base64');
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://idp');
    if (req.method !== 'GET' || url.pathname !== '/sso') {
      res.writeHead(404).end();
      return;
    }
    try {
      const samlRequest = url.searchParams.get('SAMLRequest');
      if (!samlRequest) throw new Error('no SAMLRequest');
      const xml = inflateRawSync(Buffer.from(samlRequest, 'base64')).toString('utf8');
      const doc = new DOMParser().parseFromString(xml, 'text/xml');
      const root = doc.documentElement;
      if (root?.localName !== 'AuthnRequest') throw new Error('not an AuthnRequest');
      const issuer = root.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:assertion', 'Issuer')[0]?.textContent;
      const request: AuthnRequestSeen = {
        id: root.getAttribute('ID') ?? '',
        acsUrl: root.getAttribute('AssertionConsumerServiceURL') ?? '',
        issuer: issuer ?? '',
        relayState: url.searchParams.get('RelayState') ?? undefined,
      };
      requests.push(request);
      const knobs = idp.next;
      idp.next = {};
      const samlResponse = respond(request, knobs);
      const relay = request.relayState
        ? `<input type="hidden" name="RelayState" value="${escapeXml(request.relayState)}">`
        : '';
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          '<!doctype html><html lang="en"><head><title>Test IdP</title></head>' +
            '<body onload="document.forms[0].submit()">' +
            `<form method="post" action="${escapeXml(request.acsUrl)}">` +
            `<input type="hidden" name="SAMLResponse" value="${samlResponse}">${relay}` +
            '<noscript><button type="submit">Continue</button></noscript></form></body></html>',
        );
    } catch (error) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(String(error));
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const url = `http://${options.host ?? '127.0.0.1'}:${port}`;
  const idp: SamlIdp = {
    url,
    ssoUrl: `${url}/sso`,
    entityId: options.entityId ?? `${url}/metadata`,
    signing,
    user: { email: 'someone@example.com' },
    next: {},
    requests,
    respond,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  return idp;
}

/** The fields of the IdP page's auto-submitting form (what a browser would post), and where to. */
export function formOf(html: string): { action: string; fields: Record<string, string> } {
  const action = /<form method="post" action="([^"]*)"/.exec(html)?.[1];
  if (!action) throw new Error(`no form in the IdP's page: ${html.slice(0, 200)}`);
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[m[1]] = m[2]
      .replace(/&quot;/g, '"')
      .replace(/&gt;/g, '>')
      .replace(/&lt;/g, '<')
      .replace(/&amp;/g, '&');
  return { action: action.replace(/&amp;/g, '&'), fields };
}
