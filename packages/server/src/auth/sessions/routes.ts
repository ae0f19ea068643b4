// Sign-in and the session (docs/console.md):
//   POST /v1/auth/login                   email + password → session cookie, CSRF token (or the second step)
//   POST /v1/auth/login/mfa               the second step: a TOTP or recovery code → session cookie
//   POST /v1/auth/logout                  the session ends, the cookie is cleared
//   GET  /v1/auth/session                 who is signed in, and the CSRF token again
//   GET  /v1/auth/password-links/{token}  is a set-password link good (and for whom)
//   POST /v1/auth/set-password            use a set-password link (once)

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ErrorResponses } from '../../kernel/route-schemas.ts';
import type { AuthContext } from '../context.ts';
import { checkSameOriginIfBrowser } from '../csrf.ts';
import { endSessionCookie, publicOrigin, signedInUser } from '../principal.ts';
import { setSessionCookie } from '../sign-in.ts';
import {
  checkPasswordLink,
  completeMfa,
  currentSession,
  login,
  logout,
  setPasswordWithLink,
  TenantRequired,
  TooManyAttempts,
} from './handlers.ts';
import {
  LinkTokenParams,
  LoginRequest,
  MfaLoginRequest,
  MfaRequired,
  PasswordLinkInfo,
  SessionInfo,
  SetPasswordRequest,
  TenantRequiredBody,
} from './schemas.ts';

/** Who is signing in, as sessions record it. */
export const clientOf = (req: FastifyRequest) => ({ ip: req.ip, userAgent: req.headers['user-agent'] ?? '' });

export const sessionRoutes: FastifyPluginAsyncTypebox<AuthContext> = async (app, ctx) => {
  app.post(
    '/v1/auth/login',
    {
      config: { cookieless: true },
      schema: {
        tags: ['auth'],
        summary:
          'Sign in to the console: sets the guard_session cookie and returns the CSRF token. ' +
          'Failures are limited per account and per address (429 too_many_attempts with Retry-After). ' +
          'An email may be a user of several tenants; when the password is right for more than one, ' +
          '409 tenant_required lists them and tenant_id picks one. A user who holds a second factor gets ' +
          '{mfa_required: true, mfa_token} and no cookie: POST /v1/auth/login/mfa completes the sign-in. ' +
          '403 sso_required: the tenant signs in through single sign-on (sso_only)',
        security: [],
        body: LoginRequest,
        response: { 200: Type.Union([SessionInfo, MfaRequired]), 409: TenantRequiredBody, ...ErrorResponses },
      },
    },
    async (req, reply) => {
      checkSameOriginIfBrowser(req.headers, publicOrigin(ctx.publicUrl()));
      try {
        const result = await login(ctx, req.body, clientOf(req));
        if ('mfa_required' in result) return reply.header('cache-control', 'no-store').send(result);
        return setSessionCookie(reply, ctx.publicUrl(), result.token).send(result.info);
      } catch (error) {
        if (error instanceof TooManyAttempts) reply.header('retry-after', String(error.retryAfterSeconds));
        if (error instanceof TenantRequired)
          return reply
            .code(409)
            .header('cache-control', 'no-store')
            .send({ error: { code: error.code, message: error.message, tenants: error.tenants } });
        throw error;
      }
    },
  );

  app.post(
    '/v1/auth/login/mfa',
    {
      config: { cookieless: true },
      schema: {
        tags: ['auth'],
        summary:
          'Complete a sign-in with the second factor: the mfa_token and a TOTP code (accepted once) or a recovery ' +
          'code (used up). Sets the session cookie like POST /v1/auth/login. Wrong codes count toward the login ' +
          'limits; after 5 the mfa_token ends (401 mfa_expired)',
        security: [],
        body: MfaLoginRequest,
        response: { 200: SessionInfo, ...ErrorResponses },
      },
    },
    async (req, reply) => {
      checkSameOriginIfBrowser(req.headers, publicOrigin(ctx.publicUrl()));
      try {
        const { info, token } = await completeMfa(ctx, req.body, clientOf(req));
        return setSessionCookie(reply, ctx.publicUrl(), token).send(info);
      } catch (error) {
        if (error instanceof TooManyAttempts) reply.header('retry-after', String(error.retryAfterSeconds));
        throw error;
      }
    },
  );

  app.post(
    '/v1/auth/logout',
    {
      schema: {
        tags: ['auth'],
        summary: 'Sign out: the session is revoked and its cookie cleared (CSRF-checked)',
        response: { 204: Type.Null(), ...ErrorResponses },
      },
    },
    async (req, reply) => {
      await logout(ctx, signedInUser(req));
      endSessionCookie(reply, ctx.publicUrl());
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/v1/auth/session',
    {
      schema: {
        tags: ['auth'],
        summary: 'The signed-in user and the CSRF token of this session; 401 without a live session',
        response: { 200: SessionInfo, ...ErrorResponses },
      },
    },
    async (req, reply) => reply.header('cache-control', 'no-store').send(currentSession(ctx, signedInUser(req))),
  );

  app.get(
    '/v1/auth/password-links/:token',
    {
      config: { cookieless: true },
      schema: {
        tags: ['auth'],
        summary: 'Check a one-time set-password link: 404 unknown, 410 used or expired',
        security: [],
        params: LinkTokenParams,
        response: { 200: PasswordLinkInfo, ...ErrorResponses },
      },
    },
    async (req, reply) =>
      reply.header('cache-control', 'no-store').send(await checkPasswordLink(ctx, req.params.token)),
  );

  app.post(
    '/v1/auth/set-password',
    {
      config: { cookieless: true },
      schema: {
        tags: ['auth'],
        summary: "Set a password with a one-time link (it then stops working; the user's sessions end)",
        security: [],
        body: SetPasswordRequest,
        response: { 204: Type.Null(), ...ErrorResponses },
      },
    },
    async (req, reply) => {
      checkSameOriginIfBrowser(req.headers, publicOrigin(ctx.publicUrl()));
      await setPasswordWithLink(ctx, req.body);
      return reply.code(204).send(null);
    },
  );
};
