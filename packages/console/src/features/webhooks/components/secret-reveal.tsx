import { CopyField } from '../../../components/copy-field.tsx';

/** The endpoint's signing secret, right after creation: the only time it is ever shown. */
export function SecretReveal({ secret, onDone }: { secret: string; onDone: () => void }) {
  return (
    <section className="card" aria-labelledby="secret-heading">
      <h2 id="secret-heading">Endpoint created: store its secret now</h2>
      <div className="notice warn">
        <p>
          <strong>This secret is shown only once.</strong> Guard keeps it encrypted and cannot show it again. Store it
          in your receiver's configuration now; if it is lost, delete the endpoint and create a new one.
        </p>
      </div>
      <CopyField
        label="Signing secret"
        value={secret}
        hint="Your receiver checks each delivery's Guard-Signature header with it."
      />
      <button type="button" className="button" onClick={onDone}>
        I have stored the secret
      </button>
    </section>
  );
}
