// Support bundles › Analyzers (support staff): the rules every bundle is matched against (DESIGN
// §4, "Analyzers as code"), edited as a draft — add, edit, remove — and saved as a whole; the
// draft can be tried against a stored bundle first (nothing is stored); the analyzers built in
// are listed below, read-only.

import { type FormEvent, useId, useState } from 'react';
import { Link } from 'react-router';
import { DataTable } from '../../../components/data-table.tsx';
import { Page } from '../../../components/page.tsx';
import { BlockSkeleton, QueryStatus, WriteError } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { gated } from '../../auth/index.ts';
import {
  type AnalyzerRule,
  RULE_SEVERITIES,
  type RuleSeverity,
  useAnalyzers,
  useSaveRules,
  useTestRules,
} from '../api/analyzers.ts';
import { evidencePath, useBundles } from '../api/bundles.ts';

const BACK = { label: 'Support bundles', to: '/support/bundles' };
const ID_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,62}$/;
const TONES: Record<string, string> = { critical: 'danger', error: 'danger', warning: 'warn', info: 'info' };

type Stored = NonNullable<ReturnType<typeof useAnalyzers>['data']>;

function Analyzers() {
  const stored = useAnalyzers();
  if (!stored.isSuccess)
    return (
      <Page title="Analyzers" back={BACK}>
        <QueryStatus query={stored} what="the analyzers" pending={<BlockSkeleton height="20rem" label="the rules" />} />
      </Page>
    );
  return <AnalyzersEditor stored={stored.data} />;
}

function AnalyzersEditor({ stored }: { stored: Stored }) {
  const [draft, setDraft] = useState<AnalyzerRule[]>(stored.rules);
  /** The rule in the form: its index in the draft, a new one, or none. */
  const [editing, setEditing] = useState<number | 'new' | null>(stored.rules.length === 0 ? 'new' : null);
  const save = useSaveRules();
  const dirty = JSON.stringify(draft) !== JSON.stringify(stored.rules);
  const put = (rule: AnalyzerRule) => {
    setDraft((rules) =>
      typeof editing === 'number' ? rules.map((r, i) => (i === editing ? rule : r)) : [...rules, rule],
    );
    setEditing(null);
  };
  return (
    <Page
      title="Analyzers"
      back={BACK}
      description="Rules that every bundle analysed from now on is matched against: a finding for each rule that matches enough lines. Patterns run in linear time, whatever the bundle holds."
      actions={
        <a className="button" href="https://github.com/guard-project/guard/blob/main/docs/analyzers.md">
          How to write rules
        </a>
      }
    >
      <section aria-labelledby="analyzer-rules">
        <h2 id="analyzer-rules">Rules</h2>
        <p className="hint">
          {stored.updated_at ? (
            <>
              {stored.rules.length} {stored.rules.length === 1 ? 'rule' : 'rules'} saved{' '}
              <RelativeTime at={stored.updated_at} />.
            </>
          ) : (
            'No rules saved yet.'
          )}{' '}
          Bundles analysed before a save keep their findings until they are analysed again.
        </p>
        <DataTable
          caption="Rules of the draft, in the order their findings are listed"
          rows={draft}
          rowKey={(r) => r.id}
          empty={<p>No rules in the draft.</p>}
          columns={[
            {
              header: 'Rule',
              className: 'wrap',
              cell: (r) => (
                <>
                  {r.title}
                  <div className="mono hint">rule.{r.id}</div>
                </>
              ),
            },
            { header: 'Severity', cell: (r) => <span className={`badge ${TONES[r.severity]}`}>{r.severity}</span> },
            { header: 'Members', className: 'mono nowrap', cell: (r) => r.member },
            { header: 'Pattern', className: 'mono wrap', cell: (r) => r.pattern },
            {
              header: 'At least',
              className: 'nowrap',
              cell: (r) => `${r.min_count ?? 1} ${(r.min_count ?? 1) === 1 ? 'line' : 'lines'}`,
            },
            {
              header: 'Actions',
              className: 'nowrap',
              cell: (r) => {
                const at = draft.indexOf(r);
                return (
                  <span className="actions">
                    <button
                      type="button"
                      className="button small"
                      onClick={() => setEditing(at)}
                      aria-label={`Edit ${r.id}`}
                    >
                      Edit
                    </button>
                    <button
                      type="button"
                      className="button small"
                      aria-label={`Remove ${r.id}`}
                      onClick={() => {
                        setDraft((rules) => rules.filter((_, i) => i !== at));
                        setEditing(null);
                      }}
                    >
                      Remove
                    </button>
                  </span>
                );
              },
            },
          ]}
        />
        {editing === null ? (
          <p className="actions">
            <button type="button" className="button" onClick={() => setEditing('new')}>
              Add a rule
            </button>
          </p>
        ) : (
          <RuleForm
            key={String(editing)}
            initial={typeof editing === 'number' ? draft[editing] : undefined}
            takenIds={draft.filter((_, i) => i !== editing).map((r) => r.id)}
            onDone={put}
            onCancel={() => setEditing(null)}
          />
        )}
        <div className="actions save-row">
          <button
            type="button"
            className="button primary"
            disabled={!dirty || save.isPending}
            // A save answers the rules as stored: the draft starts again from them.
            onClick={() => save.mutate(draft, { onSuccess: (saved) => setDraft(saved.rules) })}
          >
            Save rules
          </button>
          {dirty && (
            <>
              <span className="hint" role="status">
                Unsaved changes
              </span>
              <button type="button" className="button" onClick={() => setDraft(stored.rules)}>
                Discard changes
              </button>
            </>
          )}
        </div>
        <WriteError error={save.error} />
      </section>

      <TestAgainstBundle rules={draft} />

      <section aria-labelledby="analyzers-builtin">
        <h2 id="analyzers-builtin">Built in</h2>
        <p className="hint">Run on every bundle before the rules; they change with a release of the service.</p>
        <DataTable
          caption="Analyzers built into the service"
          rows={stored.builtin}
          rowKey={(a) => a.name}
          columns={[
            { header: 'Analyzer', className: 'nowrap', cell: (a) => a.name },
            { header: 'What it finds', className: 'wrap', cell: (a) => a.description },
            { header: 'Codes', className: 'mono wrap', cell: (a) => a.codes.join(', ') },
          ]}
        />
      </section>
    </Page>
  );
}

/** One rule's fields, checked as support would expect before the server checks them again. */
function RuleForm({
  initial,
  takenIds,
  onDone,
  onCancel,
}: {
  initial: AnalyzerRule | undefined;
  takenIds: string[];
  onDone: (rule: AnalyzerRule) => void;
  onCancel: () => void;
}) {
  const id = useId();
  const [problem, setProblem] = useState<string>();
  const onSubmit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    const rule: AnalyzerRule = {
      id: text('id'),
      title: text('title'),
      severity: text('severity') as RuleSeverity,
      member: text('member'),
      pattern: String(form.get('pattern') ?? ''),
    };
    const min = Number(text('min_count') || '1');
    if (!ID_PATTERN.test(rule.id))
      return setProblem(
        'The id takes lower case letters, digits, "_", "." and "-", and starts with a letter or digit.',
      );
    if (takenIds.includes(rule.id)) return setProblem(`Another rule of the draft is ${rule.id} already.`);
    if (!Number.isInteger(min) || min < 1) return setProblem('"At least" is a whole number of lines, 1 or more.');
    try {
      new RegExp(rule.pattern);
    } catch (error) {
      return setProblem(`The pattern is not a regular expression: ${(error as Error).message}`);
    }
    onDone(min === 1 ? rule : { ...rule, min_count: min });
  };
  return (
    <form className="card rule-form" onSubmit={onSubmit} aria-labelledby={`${id}-h`}>
      <h3 id={`${id}-h`}>{initial ? `Edit rule ${initial.id}` : 'New rule'}</h3>
      <div className="rule-fields">
        <Field label="Id" name="id" hint="the finding's code is rule.<id>" defaultValue={initial?.id} />
        <Field label="Title" name="title" hint="the finding's title" defaultValue={initial?.title} wide />
        <div className="field">
          <label htmlFor={`${id}-severity`}>Severity</label>
          <select id={`${id}-severity`} name="severity" defaultValue={initial?.severity ?? 'warning'}>
            {RULE_SEVERITIES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <Field
          label="Members"
          name="member"
          hint="a glob: agent.log*, system.json, *"
          defaultValue={initial?.member ?? 'agent.log*'}
        />
        <Field
          label="Pattern"
          name="pattern"
          hint="a regular expression matched against each line"
          defaultValue={initial?.pattern}
          mono
          wide
        />
        <Field
          label="At least"
          name="min_count"
          hint="lines matched for a finding"
          defaultValue={String(initial?.min_count ?? 1)}
          inputMode="numeric"
        />
      </div>
      {problem && (
        <div className="notice error" role="alert">
          <p>{problem}</p>
        </div>
      )}
      <p className="actions">
        <button type="submit" className="button primary">
          {initial ? 'Update rule' : 'Add to draft'}
        </button>
        <button type="button" className="button" onClick={onCancel}>
          Cancel
        </button>
      </p>
    </form>
  );
}

function Field({
  label,
  name,
  hint,
  defaultValue,
  wide,
  mono,
  inputMode,
}: {
  label: string;
  name: string;
  hint: string;
  defaultValue: string | undefined;
  wide?: boolean;
  mono?: boolean;
  inputMode?: 'numeric';
}) {
  const id = useId();
  return (
    <div className={`field${wide ? ' wide' : ''}`}>
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        name={name}
        required
        defaultValue={defaultValue}
        className={mono ? 'mono' : undefined}
        inputMode={inputMode}
        aria-describedby={`${id}-hint`}
        autoComplete="off"
        spellCheck={false}
      />
      <p className="hint" id={`${id}-hint`}>
        {hint}
      </p>
    </div>
  );
}

/** The draft tried against one stored bundle: what each rule matched, and the findings it would give. */
function TestAgainstBundle({ rules }: { rules: AnalyzerRule[] }) {
  const id = useId();
  const bundles = useBundles({}, undefined);
  const [bundleId, setBundleId] = useState('');
  const test = useTestRules();
  const chosen = bundleId || bundles.data?.bundles.find((b) => !b.deleted)?.bundle_id || '';
  const result = test.data;
  return (
    <section aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Test against a bundle</h2>
      <p className="hint">
        Runs the draft's rules, saved or not, on a stored bundle. Nothing is stored; the read is audited.
      </p>
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          if (chosen) test.mutate({ bundleId: chosen, rules });
        }}
      >
        <div className="field wide-field">
          <label htmlFor={`${id}-bundle`}>Bundle</label>
          <select id={`${id}-bundle`} value={chosen} onChange={(e) => setBundleId(e.target.value)}>
            {bundles.data?.bundles
              .filter((b) => !b.deleted)
              .map((b) => (
                <option key={b.bundle_id} value={b.bundle_id}>
                  {b.hostname} · {b.filename} · {new Date(b.uploaded_at).toLocaleString()}
                </option>
              ))}
          </select>
        </div>
        <button type="submit" className="button primary" disabled={!chosen || rules.length === 0 || test.isPending}>
          {test.isPending ? 'Testing…' : 'Test against this bundle'}
        </button>
      </form>
      <WriteError error={test.error} />
      {result && (
        <section className="card" aria-label="Test result">
          <p role="status">
            {result.findings.length} of {result.matches.length} {result.matches.length === 1 ? 'rule' : 'rules'} would
            give a finding on <Link to={`/support/bundles/${result.bundle_id}`}>bundle {result.bundle_id}</Link> (read
            in {(result.elapsed_ms / 1000).toFixed(1)} s).
          </p>
          <DataTable
            caption="Lines each rule matched"
            rows={result.matches}
            rowKey={(m) => m.id}
            columns={[
              { header: 'Rule', className: 'mono', cell: (m) => m.id },
              { header: 'Lines matched', cell: (m) => m.count.toLocaleString() },
              { header: 'In', className: 'mono wrap', cell: (m) => m.members.join(', ') || '—' },
              {
                header: 'Finding',
                cell: (m) => {
                  const f = result.findings.find((x) => x.code === `rule.${m.id}`);
                  const needed = rules.find((r) => r.id === m.id)?.min_count ?? 1;
                  return f ? (
                    <span className={`badge ${TONES[f.severity]}`}>{f.severity}</span>
                  ) : (
                    <span className="hint">none{m.count > 0 ? ` (needs ${needed})` : ''}</span>
                  );
                },
              },
            ]}
          />
          {result.findings.length > 0 && (
            <ul className="findings" aria-label="Findings the rules would give">
              {result.findings.map((f) => (
                <li key={f.code} className="finding">
                  <strong>{f.title}</strong> <span className="mono hint">{f.code}</span>
                  <p>{f.detail}</p>
                  <p className="evidence">
                    Evidence:{' '}
                    {f.evidence.map((e, j) => (
                      <span key={`${e.member}:${e.line ?? 0}`}>
                        {j > 0 && ', '}
                        <Link to={evidencePath(result.bundle_id, e.member, e.line)} className="mono">
                          {e.member} line {e.line}
                        </Link>
                      </span>
                    ))}
                  </p>
                </li>
              ))}
            </ul>
          )}
        </section>
      )}
    </section>
  );
}

export default gated('manageAnalyzers', Analyzers);
