// The signed-in user, provided by the app's signed-in layout to every page under it. Pages
// read the user the layout rendered them for, never the session cache directly: when the
// session ends, the layout swaps the page for the sign-in form in the same render, and no
// page ever runs without a user.

import { createContext, useContext } from 'react';
import type { SessionUser } from './api/session.ts';
import { can, type Permission } from './permissions.ts';

export const UserContext = createContext<SessionUser | null>(null);

export function useUser(): SessionUser {
  const user = useContext(UserContext);
  if (!user) throw new Error('useUser outside a signed-in page');
  return user;
}

export function useCan(permission: Permission): boolean {
  return can(useContext(UserContext)?.role, permission);
}
