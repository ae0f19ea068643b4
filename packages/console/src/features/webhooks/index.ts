// What the app uses of webhooks beyond its pages (the router loads those lazily).
export { WithFailingEndpointsBanner } from './components/failing-banner.tsx';
