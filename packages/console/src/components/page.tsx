import { type ReactNode, useEffect } from 'react';
import { Link } from 'react-router';

/**
 * Where "back" leads. Its label never repeats a navigation name (Signals, Webhooks…): people
 * and tests find those links by name, and a second link of the same name would be ambiguous.
 */
export interface BackLink {
  label: string;
  to: string;
}

/** A page: a back link, its one h1, a line saying what it is for, actions, content. */
export function Page({
  title,
  description,
  back,
  actions,
  children,
}: {
  title: string;
  description?: ReactNode;
  back?: BackLink;
  actions?: ReactNode;
  children?: ReactNode;
}) {
  useEffect(() => {
    document.title = `${title} · Guard`;
  }, [title]);
  return (
    <>
      {back && (
        <p className="back-link">
          <Link to={back.to}>
            <span aria-hidden="true">← </span>
            {back.label}
          </Link>
        </p>
      )}
      <div className="page-header">
        <div className="page-title">
          <h1>{title}</h1>
          {description && <p>{description}</p>}
        </div>
        {actions && <div className="actions">{actions}</div>}
      </div>
      {children}
    </>
  );
}
