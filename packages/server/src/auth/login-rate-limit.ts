// Failed sign-ins are limited (docs/console.md#rate-limits), counted in the database so that
// every replica sees every failure (N replicas must not give N times the tries):
//   per account and address   5 in 15 min: a guesser locks out only their own address, never
//                             the account's owner signing in from another (issue 19: anyone
//                             who knew an admin's email could keep the account locked);
//   per account               50 in 15 min from all addresses together: distributed guessing;
//   per address               20 in 15 min for every account: one address trying many.
// A failure is a row (kind of key, SHA-256 of the key, time): no email or address is stored in
// clear. Rows older than the window are deleted as failures come in (at most once a minute per
// process). The clock is passed in; the policy is a function of the rows.

import { createHash } from 'node:crypto';
import type { Db } from '../db/index.ts';

export interface LoginLimits {
  windowMs: number;
  perPair: number;
  perAccount: number;
  perAddress: number;
}

export const LOGIN_LIMITS: LoginLimits = { windowMs: 15 * 60_000, perPair: 5, perAccount: 50, perAddress: 20 };

const PRUNE_EVERY_MS = 60_000;

type Kind = 'pair' | 'account' | 'address';

const keyOf = (kind: Kind, ...parts: string[]) =>
  createHash('sha256')
    .update(`${kind}\0${parts.join('\0')}`)
    .digest('hex');

export class LoginRateLimiter {
  readonly #db: Db;
  readonly #limits: LoginLimits;
  #prunedAt = 0;

  constructor(db: Db, limits: LoginLimits = LOGIN_LIMITS) {
    this.#db = db;
    this.#limits = limits;
  }

  #keys(account: string, address: string): [key: string, limit: number][] {
    return [
      [keyOf('pair', account, address), this.#limits.perPair],
      [keyOf('account', account), this.#limits.perAccount],
      [keyOf('address', address), this.#limits.perAddress],
    ];
  }

  /** Milliseconds until the key may fail again, or 0: when its limit-th newest failure leaves the window. */
  async #blockedFor(key: string, limit: number, now: number): Promise<number> {
    const since = new Date(now - this.#limits.windowMs).toISOString();
    const rows = await this.#db
      .selectFrom('login_failures')
      .select('at')
      .where('key_hash', '=', key)
      .where('at', '>', since)
      .orderBy('at', 'desc')
      .limit(limit)
      .execute();
    if (rows.length < limit) return 0;
    return Math.max(0, Date.parse(rows[limit - 1].at) + this.#limits.windowMs - now);
  }

  /** Whole seconds until this account may try again from this address, or 0 when it may now. */
  async retryAfterSeconds(account: string, address: string, now: Date): Promise<number> {
    const t = now.getTime();
    const waits = await Promise.all(
      this.#keys(account, address).map(([key, limit]) => this.#blockedFor(key, limit, t)),
    );
    const ms = Math.max(...waits);
    return ms > 0 ? Math.ceil(ms / 1000) : 0;
  }

  async failed(account: string, address: string, now: Date): Promise<void> {
    const at = now.toISOString();
    await this.#db
      .insertInto('login_failures')
      .values(this.#keys(account, address).map(([key]) => ({ key_hash: key, at })))
      .execute();
    if (now.getTime() - this.#prunedAt >= PRUNE_EVERY_MS) {
      this.#prunedAt = now.getTime();
      const before = new Date(now.getTime() - this.#limits.windowMs).toISOString();
      await this.#db.deleteFrom('login_failures').where('at', '<=', before).execute();
    }
  }

  /**
   * A success clears the failures of the account and of this pair (not the address's: one right
   * guess does not open an address that tried many accounts).
   */
  async succeeded(account: string, address: string): Promise<void> {
    await this.#db
      .deleteFrom('login_failures')
      .where('key_hash', 'in', [keyOf('pair', account, address), keyOf('account', account)])
      .execute();
  }
}
