/**
 * A webhook trigger as GET /api/wf/{id}/triggers/ answers it (TriggerResponse in the API's
 * OpenAPI), the fields the console shows and edits. Declared here: the server's schema module
 * reaches into the engine, which the console's stricter type-check does not take.
 */
export interface Trigger {
  id: string;
  workflow_id: string;
  name: string;
  url: string | null;
  input_mapping: Record<string, string> | null;
  signature: { scheme: 'hmac' | 'stripe'; header: string; prefix: string } | null;
  has_secret: boolean;
  dedupe_header: string | null;
  respond: 'accepted' | 'result';
  rate_per_second: number;
  recent_runs: Array<{ run_id: string; status: string; start_time: string }>;
}
