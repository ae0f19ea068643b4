// Enrolment: tokens (admins, `guard-server setup`) and the agent's exchange of one for its key.
export { enrollmentRoutes } from './routes.ts';
export { createEnrollmentToken } from './tokens.ts';
