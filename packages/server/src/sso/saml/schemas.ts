import { Type } from 'typebox';
import { MAX_IDP_CERTIFICATES } from './connection-input.ts';
import { SAML_RESPONSE_MAX_CHARS } from './sign-in.ts';

const Domains = Type.Array(Type.String({ minLength: 1, maxLength: 253 }), {
  minItems: 1,
  maxItems: 50,
  description: 'email domains whose users sign in through this IdP (each belongs to one tenant)',
});

export const SamlConnectionChange = Type.Object(
  {
    idp_entity_id: Type.String({
      minLength: 1,
      maxLength: 1024,
      description: "the IdP's entity ID (Issuer of its assertions)",
    }),
    sso_url: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: "the IdP's single sign-on URL (HTTP-Redirect binding): https://, or http:// on loopback",
    }),
    idp_certificates: Type.Array(Type.String({ minLength: 1, maxLength: 16_384 }), {
      minItems: 1,
      maxItems: MAX_IDP_CERTIFICATES,
      description: "the IdP's signing certificates in PEM (two or three while it rotates)",
    }),
    email_domains: Domains,
    admin_group: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 256 }), Type.Null()], {
        description: 'members of this IdP group are admins (needs groups_attribute)',
      }),
    ),
    email_attribute: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 256 }), Type.Null()], {
        description: 'attribute holding the email, when the NameID is not of format emailAddress',
      }),
    ),
    groups_attribute: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 256 }), Type.Null()], {
        description: "attribute holding the user's groups",
      }),
    ),
  },
  { additionalProperties: false },
);

const ServiceProviderFacts = Type.Object({
  entity_id: Type.String({ description: 'the SP entity ID (audience) to give the IdP' }),
  acs_url: Type.String({ description: 'the Assertion Consumer Service URL (HTTP-POST) to give the IdP' }),
  metadata_url: Type.String({ description: 'the SP metadata document, for IdPs that import it' }),
  name_id_format: Type.String({ description: 'the NameID format asked for' }),
});

const Certificate = Type.Object({
  pem: Type.String(),
  subject: Type.String(),
  not_after: Type.String({ format: 'date-time' }),
  sha256_fingerprint: Type.String(),
});

const Connection = Type.Object({
  idp_entity_id: Type.String(),
  sso_url: Type.String(),
  idp_certificates: Type.Array(Certificate),
  email_domains: Type.Array(Type.String()),
  admin_group: Type.Union([Type.String(), Type.Null()]),
  email_attribute: Type.Union([Type.String(), Type.Null()]),
  groups_attribute: Type.Union([Type.String(), Type.Null()]),
  updated_at: Type.String({ format: 'date-time' }),
});

export const SamlConnectionView = Type.Object({
  service_provider: ServiceProviderFacts,
  connection: Type.Union([Connection, Type.Null()], { description: 'null until an admin configures one' }),
});

export const SamlStartQuery = Type.Object({
  email: Type.String({ minLength: 3, maxLength: 320, pattern: '@', description: 'the work email signing in' }),
});

export const SamlAcsBody = Type.Object({
  SAMLResponse: Type.String({ minLength: 1, maxLength: SAML_RESPONSE_MAX_CHARS }),
  RelayState: Type.Optional(Type.String({ maxLength: 1024 })),
});
