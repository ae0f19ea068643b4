// A user's own sessions, password and personal API tokens.

import type { Static } from 'typebox';
import type { ApiTokenTable } from '../../db/index.ts';
import { ApiError, notFound, unauthorized } from '../../kernel/errors.ts';
import type { AuthContext } from '../context.ts';
import type { UserPrincipal } from '../principal.ts';
import { parseScopes } from '../scopes.ts';
import { checkPassword, hashPassword, hashSecret, newId, newSecret } from '../secrets.ts';
import { TooManyAttempts } from '../sessions/handlers.ts';
import type { CreateToken, TokenView } from './schemas.ts';

export async function listSessions(ctx: AuthContext, user: UserPrincipal) {
  const rows = await ctx.sessions.listLive(user.userId, ctx.now().toISOString());
  return {
    sessions: rows.map((s) => ({
      id: s.id,
      created_at: s.created_at,
      last_seen_at: s.last_seen_at,
      idle_expires_at: s.idle_expires_at,
      expires_at: s.expires_at,
      ip: s.ip,
      user_agent: s.user_agent,
      current: s.id === user.session?.id,
    })),
  };
}

/** Revokes one of the user's sessions; true when it was the one asking. */
export async function revokeSession(ctx: AuthContext, user: UserPrincipal, id: string): Promise<boolean> {
  if (!(await ctx.sessions.revoke(user.userId, id, ctx.now().toISOString()))) throw notFound('session');
  return id === user.session?.id;
}

/**
 * Changes the user's password; every other session ends (the one asking goes on). A wrong
 * current password counts as a failed sign-in of the account (rate limits apply).
 */
export async function changePassword(
  ctx: AuthContext,
  user: UserPrincipal,
  body: { current_password: string; new_password: string },
  ip: string,
): Promise<void> {
  const retryAfter = await ctx.limiter.retryAfterSeconds(user.email, ip, ctx.now());
  if (retryAfter > 0) throw new TooManyAttempts(retryAfter);
  const account = await ctx.credentials.accountById(user.userId);
  if (!(await checkPassword(body.current_password, account?.password_hash))) {
    await ctx.limiter.failed(user.email, ip, ctx.now());
    throw new ApiError(400, 'wrong_password', 'the current password is wrong');
  }
  await ctx.credentials.setPassword(
    user.userId,
    await hashPassword(body.new_password),
    ctx.now().toISOString(),
    user.session?.id,
  );
}

const DAY_MS = 86_400_000;

function tokenView(t: ApiTokenTable): Static<typeof TokenView> {
  return {
    id: t.id,
    name: t.name,
    created_at: t.created_at,
    scopes: parseScopes(t.scopes) ?? null,
    expires_at: t.expires_at ?? null,
    last_used_at: t.last_used_at ?? null,
  };
}

export async function listTokens(ctx: AuthContext, user: UserPrincipal) {
  const rows = await ctx.credentials.listTokens(user.userId);
  return { tokens: rows.map(tokenView) };
}

export async function createToken(ctx: AuthContext, user: UserPrincipal, body: Static<typeof CreateToken>) {
  // The scope check refuses a scoped token here already (account:write); this holds even if a route forgets it.
  if (user.scopes !== undefined)
    throw new ApiError(403, 'insufficient_scope', 'a scoped token cannot create tokens: use a full-access credential');
  const token = newSecret('userToken');
  const now = ctx.now();
  const days = body.expires_in_days ?? null;
  const row: ApiTokenTable = {
    id: newId('tok'),
    user_id: user.userId,
    token_hash: hashSecret(token),
    name: body.name,
    created_at: now.toISOString(),
    revoked_at: null,
    scopes: body.scopes === undefined ? null : JSON.stringify(body.scopes),
    expires_at: days === null ? null : new Date(now.getTime() + days * DAY_MS).toISOString(),
    last_used_at: null,
  };
  // A token made through a credential revoked meanwhile (a reset revokes them all) would outlive it.
  if (!(await ctx.credentials.insertTokenWhileLive(row, { sessionId: user.session?.id, tokenId: user.tokenId })))
    throw unauthorized();
  return { ...tokenView(row), token };
}

export async function revokeToken(ctx: AuthContext, user: UserPrincipal, id: string): Promise<void> {
  if (!(await ctx.credentials.revokeToken(user.userId, id, ctx.now().toISOString()))) throw notFound('API token');
}
