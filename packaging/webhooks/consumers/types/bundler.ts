// Compiled by TypeScript 5.0 with moduleResolution bundler and node10.
import { constructEvent, type HeaderSource, type RawBody } from '@guard/webhooks';
import { constructEventAsync } from '@guard/webhooks/web';

export function receive(body: RawBody, headers: HeaderSource): string {
  return constructEvent(body, headers, 'whsec_x').data.description;
}
export const edge = (body: RawBody, headers: HeaderSource) => constructEventAsync(body, headers, 'whsec_x');
