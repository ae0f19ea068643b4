// One-time set-password links (DESIGN §7): `<public_url>/console/set-password#<token>`. The
// token rides in the URL fragment, which browsers never send to a server, so it reaches no
// request log and no Referer; only its SHA-256 is stored. A new link replaces the user's
// earlier ones; a link works once and until it expires.

import type { Kysely } from 'kysely';
import type { Database } from '../db/index.ts';
import { insertPasswordLink } from './credentials-repository.ts';
import { hashSecret, newId, newSecret } from './secrets.ts';

export interface IssuedLink {
  set_password_url: string;
  expires_at: string;
}

export function setPasswordUrl(publicUrl: string, token: string): string {
  return `${publicUrl}/console/set-password#${token}`;
}

export async function issuePasswordLink(
  db: Kysely<Database>,
  userId: string,
  opts: { now: Date; ttlMs: number; publicUrl: string },
): Promise<IssuedLink> {
  const token = newSecret('passwordLink');
  const expiresAt = new Date(opts.now.getTime() + opts.ttlMs).toISOString();
  await insertPasswordLink(db, {
    id: newId('pl'),
    user_id: userId,
    token_hash: hashSecret(token),
    created_at: opts.now.toISOString(),
    expires_at: expiresAt,
    used_at: null,
  });
  return { set_password_url: setPasswordUrl(opts.publicUrl, token), expires_at: expiresAt };
}
