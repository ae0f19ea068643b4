// Schemas shared by the sign-in and "me" routes.

import { type Static, Type } from 'typebox';

/** The signed-in person, as the console shows them. */
export const SessionUser = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: Type.Union([Type.Literal('admin'), Type.Literal('member'), Type.Literal('support')]),
  tenant_id: Type.Union([Type.String(), Type.Null()], { description: 'null for vendor support staff' }),
});
export type SessionUser = Static<typeof SessionUser>;

/** Passwords people choose: 12 to 256 characters. */
export const NewPassword = Type.String({ minLength: 12, maxLength: 256 });
