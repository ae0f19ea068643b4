// The console: guard-server serves the built SPA (packages/console) at /console/.
export { CONSOLE_CSP, consoleRoutes, DEFAULT_CONSOLE_DIR } from './routes.ts';
