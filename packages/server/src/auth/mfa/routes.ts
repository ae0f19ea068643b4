// The signed-in user's second factors (DESIGN §6, two-step sign-in):
//   GET  /v1/me/mfa                      what is on, recovery codes left, whether the tenant requires it
//   POST /v1/me/mfa/totp                 a new secret and its otpauth:// URL (201)
//   POST /v1/me/mfa/totp/confirm         the app's first code turns TOTP on → ten recovery codes
//   POST /v1/me/mfa/totp/disable         a code (or a recovery code) turns it off
//   POST /v1/me/mfa/recovery-codes       a code → ten new recovery codes (the old ones stop working)

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ErrorResponses } from '../../kernel/route-schemas.ts';
import type { AuthContext } from '../context.ts';
import { requireUser } from '../principal.ts';
import { confirmTotp, disableTotp, mfaStatus, renewRecoveryCodes, startTotp } from './handlers.ts';
import { CodeBody, MfaStatus, RecoveryCodes, TotpSetup } from './schemas.ts';

const ANYONE = ['admin', 'member', 'support'] as const;

export const mfaRoutes: FastifyPluginAsyncTypebox<AuthContext> = async (app, ctx) => {
  app.get(
    '/v1/me/mfa',
    {
      config: { scope: 'account' },
      schema: {
        tags: ['me'],
        summary: 'Your second factors: the authenticator app, recovery codes left, passkeys',
        response: { 200: MfaStatus, ...ErrorResponses },
      },
    },
    async (req) => mfaStatus(ctx, requireUser(req, ANYONE)),
  );

  app.post(
    '/v1/me/mfa/totp',
    {
      config: { scope: 'account' },
      schema: {
        tags: ['me'],
        summary:
          'Start setting up an authenticator app (TOTP: SHA-1, 6 digits, 30 s): the secret and its otpauth:// URL ' +
          'for the QR code. Nothing changes until a code confirms it; 409 totp_enabled when it is already on',
        response: { 201: TotpSetup, ...ErrorResponses },
      },
    },
    async (req, reply) =>
      reply
        .code(201)
        .header('cache-control', 'no-store')
        .send(await startTotp(ctx, requireUser(req, ANYONE))),
  );

  app.post(
    '/v1/me/mfa/totp/confirm',
    {
      config: { scope: 'account' },
      schema: {
        tags: ['me'],
        summary:
          "Confirm the setup with the app's current code: two-step sign-in is on, and the ten single-use " +
          'recovery codes are returned this once',
        body: CodeBody,
        response: { 200: RecoveryCodes, ...ErrorResponses },
      },
    },
    async (req, reply) =>
      reply
        .header('cache-control', 'no-store')
        .send(await confirmTotp(ctx, requireUser(req, ANYONE), req.body.code, req.ip)),
  );

  app.post(
    '/v1/me/mfa/totp/disable',
    {
      config: { scope: 'account' },
      schema: {
        tags: ['me'],
        summary:
          'Turn the authenticator app off with a current code or a recovery code; the recovery codes go with it. ' +
          '409 mfa_required_by_tenant when the tenant requires a second factor and you have no passkey',
        body: CodeBody,
        response: { 204: Type.Null(), ...ErrorResponses },
      },
    },
    async (req, reply) => {
      await disableTotp(ctx, requireUser(req, ANYONE), req.body.code, req.ip);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/me/mfa/recovery-codes',
    {
      config: { scope: 'account' },
      schema: {
        tags: ['me'],
        summary:
          'Ten new recovery codes (a current code or a recovery code proves it is you); the old ones stop working',
        body: CodeBody,
        response: { 200: RecoveryCodes, ...ErrorResponses },
      },
    },
    async (req, reply) =>
      reply
        .header('cache-control', 'no-store')
        .send(await renewRecoveryCodes(ctx, requireUser(req, ANYONE), req.body.code, req.ip)),
  );
};
