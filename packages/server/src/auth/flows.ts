// The state of a sign-in between two of its requests, in the database (the auth_flows table),
// so that whichever replica answers the next step finds it (issue 22, item 8):
//   mfa                 the password was right; the second factor is asked next (5 min)
//   oidc                an OpenID Connect round trip: state → nonce, PKCE verifier (10 min)
//   saml                a SAML round trip: the AuthnRequest's id → the tenant (10 min)
//   saml_assertion      an assertion id already taken, until it expires (replays refused)
//   sso_finish          a verified SAML answer waiting for its browser's binding (2 min)
//   webauthn_register   a passkey being added: the challenge (5 min)
//   webauthn_sign_in    a password-less sign-in: the challenge (5 min)
// A flow is found by the SHA-256 of its token (or state, or request id) and used once: `take`
// marks it used in the same statement that reads it, so two replicas given the same token
// cannot both go on. Wrong answers are counted on the flow; at the limit it ends.

import { randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { AuthFlowTable, Db } from '../db/index.ts';
import { hashSecret } from './secrets.ts';

export type FlowKind =
  | 'mfa'
  | 'oidc'
  | 'saml'
  | 'saml_assertion'
  | 'sso_finish'
  | 'webauthn_register'
  | 'webauthn_sign_in';

export interface Flow<Data = Record<string, unknown>> {
  kind: FlowKind;
  tenantId: string | null;
  userId: string | null;
  data: Data;
  attempts: number;
  createdAt: string;
  expiresAt: string;
}

export interface StartFlow<Data> {
  tenantId?: string | null;
  userId?: string | null;
  data?: Data;
  ttlMs: number;
  /** The flow's key when the protocol names it (an OIDC state, a SAML request id); default: a new random token. */
  key?: string;
}

/** Expired flows are deleted as new ones start, at most once a minute per process. */
const PRUNE_EVERY_MS = 60_000;

/** A flow's key is namespaced by its kind, so a token of one kind never finds a flow of another. */
const idHash = (kind: FlowKind, key: string) => hashSecret(`${kind}\0${key}`);

function flowOf<Data>(row: Selectable<AuthFlowTable>): Flow<Data> {
  return {
    kind: row.kind as FlowKind,
    tenantId: row.tenant_id,
    userId: row.user_id,
    data: JSON.parse(row.data) as Data,
    attempts: row.attempts,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

export class AuthFlows {
  readonly #db: Db;
  readonly #now: () => Date;
  #prunedAt = 0;

  constructor(db: Db, now: () => Date) {
    this.#db = db;
    this.#now = now;
  }

  /** Starts a flow; returns its key (the token to hand to the client, or `key` as given). */
  async start<Data extends object>(kind: FlowKind, flow: StartFlow<Data>): Promise<string> {
    const key = flow.key ?? randomBytes(32).toString('base64url');
    const now = this.#now();
    await this.#prune(now);
    await this.#db
      .insertInto('auth_flows')
      .values({
        id_hash: idHash(kind, key),
        kind,
        tenant_id: flow.tenantId ?? null,
        user_id: flow.userId ?? null,
        data: JSON.stringify(flow.data ?? {}),
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + flow.ttlMs).toISOString(),
        used_at: null,
      })
      .execute();
    return key;
  }

  /**
   * Records `key` as seen until `expiresAt`: false when it was already (a replayed SAML
   * assertion). The primary key decides, on either engine, whichever replica asks.
   */
  async once(kind: FlowKind, key: string, expiresAt: Date, tenantId: string | null): Promise<boolean> {
    const now = this.#now();
    await this.#prune(now);
    const r = await this.#db
      .insertInto('auth_flows')
      .values({
        id_hash: idHash(kind, key),
        kind,
        tenant_id: tenantId,
        user_id: null,
        created_at: now.toISOString(),
        expires_at: expiresAt.toISOString(),
        used_at: now.toISOString(),
      })
      .onConflict((oc) => oc.column('id_hash').doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  /** The live, unused flow of this key, left as it is (a step that may be retried). */
  async find<Data = Record<string, unknown>>(kind: FlowKind, key: string): Promise<Flow<Data> | undefined> {
    const row = await this.#db
      .selectFrom('auth_flows')
      .selectAll()
      .where('id_hash', '=', idHash(kind, key))
      .where('used_at', 'is', null)
      .where('expires_at', '>', this.#now().toISOString())
      .executeTakeFirst();
    return row && flowOf<Data>(row);
  }

  /** The live, unused flow of this key, marked used in the same statement: only one caller gets it. */
  async take<Data = Record<string, unknown>>(kind: FlowKind, key: string): Promise<Flow<Data> | undefined> {
    const now = this.#now().toISOString();
    const row = await this.#db
      .updateTable('auth_flows')
      .set({ used_at: now })
      .where('id_hash', '=', idHash(kind, key))
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .returningAll()
      .executeTakeFirst();
    return row && flowOf<Data>(row);
  }

  /**
   * Counts a wrong answer given to the flow; at `limit` wrong answers the flow ends. True while
   * it may still be answered.
   */
  async failed(kind: FlowKind, key: string, limit: number): Promise<boolean> {
    const now = this.#now().toISOString();
    const row = await this.#db
      .updateTable('auth_flows')
      .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
      .where('id_hash', '=', idHash(kind, key))
      .where('used_at', 'is', null)
      .returning('attempts')
      .executeTakeFirst();
    if (!row) return false;
    if (row.attempts < limit) return true;
    await this.#db.updateTable('auth_flows').set({ used_at: now }).where('id_hash', '=', idHash(kind, key)).execute();
    return false;
  }

  async #prune(now: Date): Promise<void> {
    if (now.getTime() - this.#prunedAt < PRUNE_EVERY_MS) return;
    this.#prunedAt = now.getTime();
    await this.#db.deleteFrom('auth_flows').where('expires_at', '<=', now.toISOString()).execute();
  }
}
