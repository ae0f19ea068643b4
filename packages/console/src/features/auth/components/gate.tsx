import type { ComponentType, ReactNode } from 'react';
import { Page } from '../../../components/page.tsx';
import type { Permission } from '../permissions.ts';
import { useCan } from '../user-context.ts';

/** Renders its children only for roles with `permission`; others read why. */
export function Gate({ permission, children }: { permission: Permission; children: ReactNode }) {
  if (useCan(permission)) return children;
  return (
    <Page title="Not available to your role">
      <p>Your role cannot open this page. Ask an admin of your organisation if you need it.</p>
    </Page>
  );
}

/** A route module's page behind a Gate: `export default gated('readAudit', AuditLog)`. */
export function gated(permission: Permission, Content: ComponentType): ComponentType {
  return function GatedPage() {
    return (
      <Gate permission={permission}>
        <Content />
      </Gate>
    );
  };
}
