// Every console URL, under /console (guard-server serves index.html for any of them). Each
// feature's pages load on first visit (one chunk per page), so the first page loads only
// the shell and itself.

import { type ComponentType, useEffect } from 'react';
import { createBrowserRouter, Navigate, useRouteError } from 'react-router';
import { Page } from '../components/page.tsx';
import { can, homePath, SetPasswordPage, useUser } from '../features/auth/index.ts';
import { SignedInLayout } from './signed-in-layout.tsx';

type PageModule = Promise<{ default: ComponentType }>;
const page = (load: () => PageModule) => async () => ({ Component: (await load()).default });

function Home() {
  return <Navigate to={homePath(useUser().role)} replace />;
}

function SettingsHome() {
  const { role } = useUser();
  return <Navigate to={can(role, 'readWebhooks') ? 'integrations' : 'account'} replace />;
}

function NotFound() {
  return (
    <Page title="Page not found">
      <p>There is no console page at this address. Pick a page from the navigation above.</p>
    </Page>
  );
}

function RouteError() {
  const error = useRouteError();
  useEffect(() => console.error('console page failed:', error), [error]);
  return (
    <main id="main" className="auth-page">
      <div className="auth-card">
        <h1>Something went wrong</h1>
        <p>The page could not be shown. Reload it; if the console was just upgraded, that loads the new version.</p>
        <button type="button" className="button primary" onClick={() => window.location.reload()}>
          Reload
        </button>
      </div>
    </main>
  );
}

export function createRouter() {
  return createBrowserRouter(
    [
      { path: '/set-password', Component: SetPasswordPage, ErrorBoundary: RouteError },
      {
        path: '/',
        Component: SignedInLayout,
        ErrorBoundary: RouteError,
        children: [
          { index: true, Component: Home },
          { path: 'signals', lazy: page(() => import('../features/signals/routes/signals-list.tsx')) },
          { path: 'signals/:signalId', lazy: page(() => import('../features/signals/routes/signal-detail.tsx')) },
          { path: 'servers', lazy: page(() => import('../features/servers/routes/servers.tsx')) },
          {
            path: 'bundle-batches/:batchId',
            lazy: page(() => import('../features/servers/routes/bundle-batch.tsx')),
          },
          { path: 'support/bundles', lazy: page(() => import('../features/bundles/routes/bundles-list.tsx')) },
          {
            path: 'support/bundles/:bundleId',
            lazy: page(() => import('../features/bundles/routes/bundle-detail.tsx')),
          },
          {
            path: 'support/bundles/:bundleId/lines',
            lazy: page(() => import('../features/bundles/routes/bundle-lines.tsx')),
          },
          { path: 'support/analyzers', lazy: page(() => import('../features/bundles/routes/analyzers.tsx')) },
          { path: 'support/audit', lazy: page(() => import('../features/bundles/routes/audit-log.tsx')) },
          {
            path: 'settings',
            lazy: page(() => import('../features/settings/routes/settings-layout.tsx')),
            children: [
              { index: true, Component: SettingsHome },
              { path: 'integrations', lazy: page(() => import('../features/settings/routes/integrations.tsx')) },
              {
                path: 'integrations/webhooks',
                lazy: page(() => import('../features/webhooks/routes/webhooks-list.tsx')),
              },
              {
                path: 'integrations/webhooks/new',
                lazy: page(() => import('../features/webhooks/routes/endpoint-new.tsx')),
              },
              {
                path: 'integrations/webhooks/deliveries',
                lazy: page(() => import('../features/webhooks/routes/delivery-log.tsx')),
              },
              {
                path: 'integrations/webhooks/events',
                lazy: page(() => import('../features/webhooks/routes/event-catalog.tsx')),
              },
              {
                path: 'integrations/webhooks/local-development',
                lazy: page(() => import('../features/webhooks/routes/local-development.tsx')),
              },
              {
                path: 'integrations/webhooks/:endpointId',
                lazy: page(() => import('../features/webhooks/routes/endpoint-detail.tsx')),
              },
              {
                path: 'integrations/webhooks/:endpointId/edit',
                lazy: page(() => import('../features/webhooks/routes/endpoint-edit.tsx')),
              },
              {
                path: 'integrations/webhooks/:endpointId/deliveries/:deliveryId',
                lazy: page(() => import('../features/webhooks/routes/delivery-detail.tsx')),
              },
              { path: 'detection', lazy: page(() => import('../features/detection/routes/detection-settings.tsx')) },
              { path: 'users', lazy: page(() => import('../features/users/routes/users.tsx')) },
              {
                path: 'single-sign-on',
                lazy: page(() => import('../features/sso/routes/single-sign-on.tsx')),
              },
              { path: 'retention', lazy: page(() => import('../features/settings/routes/data-retention.tsx')) },
              {
                path: 'collection-schedule',
                lazy: page(() => import('../features/settings/routes/collection-schedule.tsx')),
              },
              { path: 'account', lazy: page(() => import('../features/settings/routes/account.tsx')) },
            ],
          },
          { path: '*', Component: NotFound },
        ],
      },
    ],
    { basename: '/console' },
  );
}
