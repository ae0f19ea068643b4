// Webhooks > Event catalog: every event Guard sends, when, its body's fields and an example
// (Svix's event catalog). Read from @guard/contract/webhook-events, which /openapi.json also
// publishes as OpenAPI 3.1 `webhooks`: the page needs no request.

import { WEBHOOK_EVENTS, type WebhookEventEntry } from '@guard/contract/webhook-events';
import { CodeBlock } from '../../../components/code-block.tsx';
import { CopyButton } from '../../../components/copy-button.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { Page } from '../../../components/page.tsx';
import { gated } from '../../auth/index.ts';
import { WebhooksNav } from '../components/webhooks-nav.tsx';
import { eventFields } from '../event-fields.ts';

function EventEntry({ event: e, sameBodyAs }: { event: WebhookEventEntry; sameBodyAs: string | undefined }) {
  const example = JSON.stringify(e.example, null, 2);
  const headingId = `event-${e.type.replace('.', '-')}`;
  return (
    <section className="card event" aria-labelledby={headingId}>
      <div className="event-title">
        <h2 id={headingId}>
          <code>{e.type}</code> <span className="event-name">{e.title}</span>
        </h2>
        <span className={`badge ${e.byDefault ? 'ok' : 'neutral'}`}>{e.byDefault ? 'sent by default' : 'opt-in'}</span>
      </div>
      <p>{e.summary}</p>
      <p className="hint">
        Guard-Event and <code>event_type</code>: <code>{e.eventType}</code>
      </p>
      <h3>Body</h3>
      {sameBodyAs ? (
        <p>
          The fields of <code>{sameBodyAs}</code>, above.
        </p>
      ) : (
        <DataTable
          caption={`Fields of ${e.type}`}
          rows={eventFields(e.schema)}
          rowKey={(f) => f.name}
          columns={[
            { header: 'Field', className: 'mono nowrap', cell: (f) => f.name },
            { header: 'Type', className: 'mono nowrap', cell: (f) => f.type },
            { header: 'Always', cell: (f) => (f.required ? 'yes' : 'no') },
            { header: 'Meaning', className: 'wrap', cell: (f) => f.description },
          ]}
        />
      )}
      <div className="code-heading">
        <h3>Example</h3>
        <CopyButton text={example} label={`Copy the ${e.type} example`} />
      </div>
      <CodeBlock label={`Example ${e.type} body`}>{example}</CodeBlock>
    </section>
  );
}

function EventCatalog() {
  return (
    <Page
      title="Event catalog"
      description="Every event Guard sends to your endpoints: when, the fields of its body, and an example. An endpoint chooses the ones it receives."
    >
      <WebhooksNav />
      <p className="hint">
        Each is a signed POST with the same headers (Guard-Signature, Guard-Event, Guard-Delivery, Guard-Timestamp and
        the Standard Webhooks <code>webhook-*</code> ones). The API document <code>/openapi.json</code> describes them
        too, as OpenAPI 3.1 <code>webhooks</code>, for code generators.
      </p>
      {WEBHOOK_EVENTS.map((e, i) => (
        <EventEntry
          key={e.type}
          event={e}
          // A test event's body is a signal_created's: its fields are listed once.
          sameBodyAs={WEBHOOK_EVENTS.slice(0, i).find((earlier) => earlier.eventType === e.eventType)?.type}
        />
      ))}
    </Page>
  );
}

export default gated('readWebhooks', EventCatalog);
