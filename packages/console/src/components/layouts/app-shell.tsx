import type { ReactNode } from 'react';
import { Link, NavLink } from 'react-router';

export interface NavItem {
  to: string;
  label: string;
}

export function Logo() {
  return (
    <svg viewBox="0 0 32 32" aria-hidden="true" focusable="false">
      <path d="M16 2 4 7v8c0 7.5 5.1 13.2 12 15 6.9-1.8 12-7.5 12-15V7z" fill="#3b82f6" />
      <path d="m10 16 4 4 8-8" fill="none" stroke="#fff" strokeWidth="3" strokeLinecap="round" strokeLinejoin="round" />
    </svg>
  );
}

/** The signed-in frame: skip link, header with the primary navigation and Sign out, main. */
export function AppShell({
  nav,
  email,
  onSignOut,
  signingOut,
  children,
}: {
  nav: NavItem[];
  email: string;
  onSignOut: () => void;
  signingOut: boolean;
  children: ReactNode;
}) {
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="shell-header">
        <div className="shell-header-inner">
          <Link className="brand" to="/">
            <Logo />
            Guard
          </Link>
          <nav className="primary-nav" aria-label="Main">
            <ul>
              {nav.map((item) => (
                <li key={item.to}>
                  <NavLink to={item.to}>{item.label}</NavLink>
                </li>
              ))}
            </ul>
          </nav>
          <div className="account">
            <span className="account-email" title={email}>
              {email}
            </span>
            <button type="button" className="button small" onClick={onSignOut} disabled={signingOut}>
              Sign out
            </button>
          </div>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
