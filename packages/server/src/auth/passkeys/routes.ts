// Passkeys (docs/identity.md#passkeys):
//   POST   /v1/me/passkeys/options               registration options (a WebAuthn challenge)
//   POST   /v1/me/passkeys                       add the passkey the browser made
//   GET    /v1/me/passkeys                       your passkeys
//   PATCH  /v1/me/passkeys/{id}                  rename one
//   DELETE /v1/me/passkeys/{id}                  remove one
//   POST   /v1/auth/passkey/options              password-less sign-in: options
//   POST   /v1/auth/passkey                      password-less sign-in: session cookie
//   POST   /v1/auth/login/mfa/passkey/options    a passkey as the second factor: options
//   POST   /v1/auth/login/mfa/passkey            a passkey as the second factor: session cookie

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { ErrorResponses } from '../../kernel/route-schemas.ts';
import { checkSameOriginIfBrowser } from '../csrf.ts';
import { publicOrigin, requireUser } from '../principal.ts';
import { TooManyAttempts } from '../sessions/handlers.ts';
import { SessionInfo } from '../sessions/schemas.ts';
import { type SignedIn, setSessionCookie } from '../sign-in.ts';
import {
  addPasskey,
  listPasskeys,
  type PasskeyContext,
  registrationOptions,
  removePasskey,
  renamePasskey,
  secondFactorOptions,
  secondFactorWithPasskey,
  signInOptions,
  signInWithPasskey,
} from './handlers.ts';
import {
  AddPasskey,
  PasskeyIdParams,
  PasskeyList,
  PasskeySignIn,
  PasskeyView,
  RegistrationOptions,
  RenamePasskey,
  SecondFactorAnswer,
  SecondFactorOptions,
  SecondFactorOptionsRequest,
  SignInOptions,
} from './schemas.ts';

const ANYONE = ['admin', 'member', 'support'] as const;

/** A WebAuthn answer is a few KiB; nothing bigger is read. */
const PASSKEY_BODY_LIMIT_BYTES = 64 * 1024;

export const passkeyRoutes: FastifyPluginAsyncTypebox<PasskeyContext> = async (app, ctx) => {
  /** Signs the session in, or answers 429 with Retry-After when the login limits are reached. */
  async function signedIn(reply: FastifyReply, signIn: () => Promise<SignedIn>) {
    try {
      const { info, token } = await signIn();
      return setSessionCookie(reply, ctx.publicUrl(), token).send(info);
    } catch (error) {
      if (error instanceof TooManyAttempts) reply.header('retry-after', String(error.retryAfterSeconds));
      throw error;
    }
  }

  const client = (req: { ip: string; headers: { 'user-agent'?: string } }) => ({
    ip: req.ip,
    userAgent: req.headers['user-agent'] ?? '',
  });

  app.post(
    '/v1/me/passkeys/options',
    {
      config: { scope: 'account' },
      schema: {
        tags: ['me'],
        summary:
          'Start adding a passkey: WebAuthn registration options for navigator.credentials.create() ' +
          '(a discoverable credential; your passkeys are excluded), and the flow_id to answer with within 5 min. ' +
          'A console session only (403 session_required with an API token)',
        response: { 200: RegistrationOptions, ...ErrorResponses },
      },
    },
    async (req, reply) =>
      reply.header('cache-control', 'no-store').send(await registrationOptions(ctx, requireUser(req, ANYONE))),
  );

  app.post(
    '/v1/me/passkeys',
    {
      config: { scope: 'account' },
      bodyLimit: PASSKEY_BODY_LIMIT_BYTES,
      schema: {
        tags: ['me'],
        summary:
          "Add the passkey the browser made with the options' challenge (once; 400 invalid_passkey when it does not verify). " +
          'A console session only',
        body: AddPasskey,
        response: { 201: PasskeyView, ...ErrorResponses },
      },
    },
    async (req, reply) => reply.code(201).send(await addPasskey(ctx, requireUser(req, ANYONE), req.body)),
  );

  app.get(
    '/v1/me/passkeys',
    {
      config: { scope: 'account' },
      schema: {
        tags: ['me'],
        summary: 'Your passkeys, oldest first',
        response: { 200: PasskeyList, ...ErrorResponses },
      },
    },
    async (req) => listPasskeys(ctx, requireUser(req, ANYONE)),
  );

  app.patch(
    '/v1/me/passkeys/:id',
    {
      config: { scope: 'account' },
      schema: {
        tags: ['me'],
        summary: 'Rename one of your passkeys',
        params: PasskeyIdParams,
        body: RenamePasskey,
        response: { 200: PasskeyView, ...ErrorResponses },
      },
    },
    async (req) => renamePasskey(ctx, requireUser(req, ANYONE), req.params.id, req.body.name),
  );

  app.delete(
    '/v1/me/passkeys/:id',
    {
      config: { scope: 'account' },
      schema: {
        tags: ['me'],
        summary: 'Remove one of your passkeys: it signs in no more',
        params: PasskeyIdParams,
        response: { 204: Type.Null(), ...ErrorResponses },
      },
    },
    async (req, reply) => {
      await removePasskey(ctx, requireUser(req, ANYONE), req.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/auth/passkey/options',
    {
      config: { cookieless: true, startsFlow: true },
      schema: {
        tags: ['auth'],
        summary:
          'Start a password-less sign-in: WebAuthn request options for navigator.credentials.get() ' +
          '(any passkey of this site, the user verified), and the flow_id to answer with within 5 min',
        security: [],
        response: { 200: SignInOptions, ...ErrorResponses },
      },
    },
    async (req, reply) => {
      checkSameOriginIfBrowser(req.headers, publicOrigin(ctx.publicUrl()));
      return reply.header('cache-control', 'no-store').send(await signInOptions(ctx));
    },
  );

  app.post(
    '/v1/auth/passkey',
    {
      config: { cookieless: true },
      bodyLimit: PASSKEY_BODY_LIMIT_BYTES,
      schema: {
        tags: ['auth'],
        summary:
          'Sign in with a passkey: sets the guard_session cookie like POST /v1/auth/login. Any failure is ' +
          '401 passkey_not_accepted and counts toward the login limits (429 too_many_attempts with Retry-After)',
        security: [],
        body: PasskeySignIn,
        response: { 200: SessionInfo, ...ErrorResponses },
      },
    },
    async (req, reply) => {
      checkSameOriginIfBrowser(req.headers, publicOrigin(ctx.publicUrl()));
      return signedIn(reply, () => signInWithPasskey(ctx, req.body, client(req)));
    },
  );

  app.post(
    '/v1/auth/login/mfa/passkey/options',
    {
      config: { cookieless: true },
      schema: {
        tags: ['auth'],
        summary:
          "The second step of a password sign-in with a passkey: WebAuthn request options allowing the user's passkeys " +
          '(401 mfa_expired when the step is over; 400 no_passkeys)',
        security: [],
        body: SecondFactorOptionsRequest,
        response: { 200: SecondFactorOptions, ...ErrorResponses },
      },
    },
    async (req, reply) => {
      checkSameOriginIfBrowser(req.headers, publicOrigin(ctx.publicUrl()));
      return reply.header('cache-control', 'no-store').send(await secondFactorOptions(ctx, req.body.mfa_token));
    },
  );

  app.post(
    '/v1/auth/login/mfa/passkey',
    {
      config: { cookieless: true },
      bodyLimit: PASSKEY_BODY_LIMIT_BYTES,
      schema: {
        tags: ['auth'],
        summary:
          'Complete a password sign-in with a passkey: sets the guard_session cookie like POST /v1/auth/login. ' +
          'A failure is 401 passkey_not_accepted and counts toward the login limits; after 5 the step ends',
        security: [],
        body: SecondFactorAnswer,
        response: { 200: SessionInfo, ...ErrorResponses },
      },
    },
    async (req, reply) => {
      checkSameOriginIfBrowser(req.headers, publicOrigin(ctx.publicUrl()));
      return signedIn(reply, () => secondFactorWithPasskey(ctx, req.body, client(req)));
    },
  );
};
