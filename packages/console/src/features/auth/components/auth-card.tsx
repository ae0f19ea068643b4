import { type ReactNode, useEffect } from 'react';
import { Logo } from '../../../components/layouts/app-shell.tsx';

/** The frame of the pages a signed-out person sees: sign-in and set-password. */
export function AuthCard({ title, children }: { title: string; children: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · Guard`;
  }, [title]);
  return (
    <main className="auth-page" id="main">
      <div className="auth-card">
        <div className="brand">
          <Logo /> Guard
        </div>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}
