// The agent's enrolment (`enroll`): reading the token, exchanging it for the agent API key,
// and enrollment.json, which every networked command reads. What other folders may use of it:

export { enrollAgent } from './enroll.ts';
export { checkStateDirWritable, previousEnrollment, readEnrollment } from './store.ts';
export { readToken, type TokenSource } from './token.ts';
