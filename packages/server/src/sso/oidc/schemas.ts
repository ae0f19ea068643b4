// Request and response schemas of the tenant's OpenID Connect connection and its sign-in round trip.

import { Type } from 'typebox';

/** A lower-case DNS name of at least two labels (a user's email domain). */
const Domain = Type.String({
  minLength: 3,
  maxLength: 253,
  pattern: '^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$',
  description: 'a lower-case email domain, e.g. example.com',
});

export const OidcConnectionChange = Type.Object(
  {
    issuer: Type.String({
      minLength: 8,
      maxLength: 500,
      description:
        'the provider’s issuer URL: https://, or http:// on a loopback address (development). Its discovery document is read when saved',
    }),
    client_id: Type.String({ minLength: 1, maxLength: 255 }),
    client_secret: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        description:
          'required the first time and when the issuer changes; omitted otherwise, the stored secret is kept. Never returned',
      }),
    ),
    email_domains: Type.Array(Domain, {
      minItems: 1,
      maxItems: 20,
      uniqueItems: true,
      description: 'the email domains whose people sign in through this provider; each routes to one tenant only',
    }),
    admin_group: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 256 }), Type.Null()], {
        description: 'members of this group (the provider’s groups claim) are admins; null or absent: none',
      }),
    ),
  },
  { additionalProperties: false },
);

export const OidcConnection = Type.Object({
  configured: Type.Boolean({ description: 'whether the tenant has an OpenID Connect connection' }),
  redirect_uri: Type.String({ description: 'the redirect URI to register at the provider' }),
  issuer: Type.Union([Type.String(), Type.Null()]),
  client_id: Type.Union([Type.String(), Type.Null()]),
  has_client_secret: Type.Boolean(),
  email_domains: Type.Array(Type.String()),
  admin_group: Type.Union([Type.String(), Type.Null()]),
  scopes: Type.Union([Type.String(), Type.Null()], {
    description: 'the scopes sign-in asks for (groups only when the provider lists it)',
  }),
  updated_at: Type.Union([Type.String(), Type.Null()]),
});

export const SignInStartQuery = Type.Object({
  email: Type.String({ maxLength: 320, description: 'the work email: its domain names the tenant’s provider' }),
});

/** What a provider sends back to the redirect URI; providers add parameters of their own. */
export const CallbackQuery = Type.Object(
  {
    state: Type.Optional(Type.String({ maxLength: 512 })),
    code: Type.Optional(Type.String({ maxLength: 4096 })),
    iss: Type.Optional(Type.String({ maxLength: 500 })),
    error: Type.Optional(Type.String({ maxLength: 256 })),
    error_description: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: true },
);
