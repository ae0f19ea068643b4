import { NavLink, Outlet } from 'react-router';
import { useCan } from '../../auth/index.ts';

/** Settings: its own navigation (Integrations, Detection, Users, Single sign-on, Data retention, Scheduled collection, Account) beside the page. */
export function SettingsLayout() {
  const integrations = useCan('readWebhooks');
  const users = useCan('manageUsers');
  const retention = useCan('manageRetention');
  const schedule = useCan('manageCollectionSchedule');
  const detection = useCan('readDetection');
  const sso = useCan('manageSso');
  return (
    <div className="settings">
      <nav className="settings-nav" aria-label="Settings">
        <ul>
          {integrations && (
            <li>
              <NavLink to="/settings/integrations">Integrations</NavLink>
            </li>
          )}
          {detection && (
            <li>
              <NavLink to="/settings/detection">Detection</NavLink>
            </li>
          )}
          {users && (
            <li>
              <NavLink to="/settings/users">Users</NavLink>
            </li>
          )}
          {sso && (
            <li>
              <NavLink to="/settings/single-sign-on">Single sign-on</NavLink>
            </li>
          )}
          {retention && (
            <li>
              <NavLink to="/settings/retention">Data retention</NavLink>
            </li>
          )}
          {schedule && (
            <li>
              <NavLink to="/settings/collection-schedule">Scheduled collection</NavLink>
            </li>
          )}
          <li>
            <NavLink to="/settings/account">Account</NavLink>
          </li>
        </ul>
      </nav>
      <div>
        <Outlet />
      </div>
    </div>
  );
}

export default SettingsLayout;
