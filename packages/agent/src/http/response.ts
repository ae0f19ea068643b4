// The answer of an exchange as the agent keeps it: what exchange.ts returns and failures.ts
// reads (apart from both, so that neither imports the other's types).

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body text, at most MAX_RESPONSE_BYTES of exchange.ts (longer bodies are cut there). */
  text: string;
}
