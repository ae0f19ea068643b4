// Webhooks > Local development: how to develop a receiver on a laptop (guard listen,
// --webhook-allow-private, a receiver with its own CA). The text is docs/webhooks-local-development.md
// itself, bundled at build time, so the console and the repository never say different things.

import guide from '../../../../../../docs/webhooks-local-development.md?raw';
import { MarkdownView } from '../../../components/markdown-view.tsx';
import { Page } from '../../../components/page.tsx';
import { markdownBlocks } from '../../../lib/markdown-blocks.ts';
import { gated } from '../../auth/index.ts';
import { WebhooksNav } from '../components/webhooks-nav.tsx';

const blocks = markdownBlocks(guide);
const title = blocks[0]?.kind === 'heading' && blocks[0].level === 1 ? blocks[0].text : 'Local development';
const body = blocks[0]?.kind === 'heading' && blocks[0].level === 1 ? blocks.slice(1) : blocks;

function LocalDevelopment() {
  return (
    <Page title={title} description="From docs/webhooks-local-development.md in Guard's repository.">
      <WebhooksNav />
      <section className="card" aria-label="Guide">
        <MarkdownView blocks={body} label="Local development" />
      </section>
    </Page>
  );
}

export default gated('readWebhooks', LocalDevelopment);
