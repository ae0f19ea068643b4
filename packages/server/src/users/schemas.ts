// Request and response schemas of the users API (DESIGN §7 contract), and what an admin sees of a user.

import { type Static, Type } from 'typebox';
import type { UserTable } from '../db/index.ts';

const TenantRole = Type.Union([Type.Literal('admin'), Type.Literal('member')]);

export const CreateUser = Type.Object(
  { email: Type.String({ format: 'email', minLength: 3, maxLength: 254 }), role: TenantRole },
  { additionalProperties: false },
);

export const UpdateUser = Type.Object({ role: TenantRole }, { additionalProperties: false });

export const UserView = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: TenantRole,
  created_at: Type.String(),
  has_password: Type.Boolean({ description: 'false until the user has used their set-password link' }),
  last_login_at: Type.Union([Type.String(), Type.Null()]),
  totp_enabled: Type.Boolean({ description: 'two-step sign-in with an authenticator app is on' }),
  deactivated_at: Type.Union([Type.String(), Type.Null()], {
    description: 'when the identity provider deactivated the user (SCIM active: false): no sign-in; null: active',
  }),
});
export type UserView = Static<typeof UserView>;

export const UserList = Type.Object({ users: Type.Array(UserView) });

export const PasswordLink = Type.Object({
  set_password_url: Type.String({
    description: '<public_url>/console/set-password#<token>: works once, shown once (give it to the user)',
  }),
  expires_at: Type.String(),
});

export const CreatedUser = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: TenantRole,
  ...PasswordLink.properties,
});

export function userView(u: UserTable): UserView {
  return {
    id: u.id,
    email: u.email,
    role: u.role as 'admin' | 'member',
    created_at: u.created_at,
    has_password: u.password_hash.startsWith('scrypt$'),
    last_login_at: u.last_login_at,
    totp_enabled: u.totp_enabled_at != null,
    deactivated_at: u.deactivated_at ?? null,
  };
}
