// Sign-in and the session (docs/console.md):
//   POST /v1/auth/login                   email + password → session cookie, CSRF token
//   POST /v1/auth/logout                  the session ends, the cookie is cleared
//   GET  /v1/auth/session                 who is signed in, and the CSRF token again
//   GET  /v1/auth/password-links/{token}  is a set-password link good (and for whom)
//   POST /v1/auth/set-password            use a set-password link (once)

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ErrorResponses } from '../../kernel/route-schemas.ts';
import type { AuthContext } from '../context.ts';
import { checkSameOriginIfBrowser } from '../csrf.ts';
import { endSessionCookie, isSecureUrl, publicOrigin, signedInUser } from '../principal.ts';
import { sessionCookie } from '../session-cookie.ts';
import {
  checkPasswordLink,
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
  PasswordLinkInfo,
  SessionInfo,
  SetPasswordRequest,
  TenantRequiredBody,
} from './schemas.ts';

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
          '409 tenant_required lists them and tenant_id picks one',
        security: [],
        body: LoginRequest,
        response: { 200: SessionInfo, 409: TenantRequiredBody, ...ErrorResponses },
      },
    },
    async (req, reply) => {
      checkSameOriginIfBrowser(req.headers, publicOrigin(ctx.publicUrl()));
      try {
        const { info, token } = await login(ctx, req.body, {
          ip: req.ip,
          userAgent: req.headers['user-agent'] ?? '',
        });
        return reply
          .header('set-cookie', sessionCookie(token, isSecureUrl(ctx.publicUrl())))
          .header('cache-control', 'no-store')
          .send(info);
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
