// The root of every console page: while signed out it shows the sign-in form in place (the
// URL stays, so a console_url opens once signed in); signed in, the shell with the
// navigation the role may see.

import { useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense } from 'react';
import { Outlet, useNavigate } from 'react-router';
import { AppShell, type NavItem } from '../components/layouts/app-shell.tsx';
import { ErrorNotice } from '../components/query-states.tsx';
import {
  can,
  type Role,
  SESSION_ENDED_KEY,
  SignInPage,
  UserContext,
  useSession,
  useSignOut,
} from '../features/auth/index.ts';
import { WithFailingEndpointsBanner } from '../features/webhooks/index.ts';

/** Only for sessions that must set a second factor up first: its own chunk (the QR code library). */
const MfaSetupRequiredPage = lazy(() => import('../features/settings/routes/mfa-setup-required.tsx'));

function navFor(role: Role): NavItem[] {
  const items: NavItem[] = [];
  if (can(role, 'readSignals')) items.push({ to: '/signals', label: 'Signals' });
  if (can(role, 'readServers')) items.push({ to: '/servers', label: 'Servers' });
  if (can(role, 'readBundles')) items.push({ to: '/support/bundles', label: 'Support bundles' });
  if (can(role, 'readAudit')) items.push({ to: '/support/audit', label: 'Audit log' });
  items.push({ to: '/settings', label: 'Settings' });
  return items;
}

export function SignedInLayout() {
  const session = useSession();
  const signOut = useSignOut();
  const navigate = useNavigate();
  const client = useQueryClient();
  if (session.isPending) return <div className="boot" aria-busy="true" />;
  if (session.isError)
    return (
      <main id="main">
        <ErrorNotice error={session.error} what="your session" onRetry={() => session.refetch()} />
      </main>
    );
  if (!session.data) return <SignInPage expired={client.getQueryData(SESSION_ENDED_KEY) === true} />;
  const { user } = session.data;
  if (session.data.mfa_setup_required)
    return (
      <Suspense fallback={<div className="boot" aria-busy="true" />}>
        <UserContext.Provider value={user}>
          <MfaSetupRequiredPage />
        </UserContext.Provider>
      </Suspense>
    );
  return (
    <AppShell
      nav={navFor(user.role)}
      email={user.email}
      signingOut={signOut.isPending}
      onSignOut={() => signOut.mutate(undefined, { onSettled: () => navigate('/', { replace: true }) })}
    >
      <UserContext.Provider value={user}>
        {can(user.role, 'manageWebhooks') ? (
          <WithFailingEndpointsBanner>
            <Outlet />
          </WithFailingEndpointsBanner>
        ) : (
          <Outlet />
        )}
      </UserContext.Provider>
    </AppShell>
  );
}
