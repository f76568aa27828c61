import { Registry } from 'prom-client';
import { metricKinds } from './metric-kinds';

/**
 * Every metric a Spur process exports, in Prometheus's text format on SPUR_METRICS_PORT
 * (metrics-server.ts). One registry per process: the api's and a worker's show what each did, and
 * Prometheus sums them. Labels are bounded sets (a route's template, a status, a node type, a
 * model, the fixed outcomes below), never a run's or a workflow's id, so the series stay few
 * however many runs there are. docs/production.md#metrics lists them with the process each is on.
 */
export const registry = new Registry();

const { counter, histogram, fixedCounter, sampledGauge } = metricKinds(registry);

/** Seconds, for an HTTP request or a node: milliseconds to minutes. */
const STEP_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
/** Seconds, for a run: a blocking echo to a day-long wait for an approval. */
const RUN_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14400, 86400];

/** What became of a POST /hooks/{token}: a run recorded, held while its workflow is paused, a redelivery answered again, or refused. */
export const WEBHOOK_STATUSES = ['started', 'held', 'replayed', 'unauthorized', 'rate_limited', 'rejected'] as const;
/** What a schedule's fire did: started its run; recorded it FAILED (inputs no longer fit, no launch); skipped (workflow paused); found its schedule gone; or found the run an earlier attempt made. */
export const SCHEDULE_OUTCOMES = ['started', 'failed', 'skipped', 'gone', 'repeated'] as const;
/** How a callback delivery ended: taken by the receiver, or given up (refused, or out of time). */
export const CALLBACK_OUTCOMES = ['delivered', 'failed'] as const;
/** Who made a server-side request: a node (its model calls too), an embedding, a callback, an approval message, an AI helper, a sign-in. */
export const OUTBOUND_KINDS = ['node', 'embedding', 'callback', 'approval', 'assist', 'sign_in', 'other'] as const;
/** Answered below 400, answered 400 or more, refused by the address policy, or no answer (network, timeout, cancel). */
export const OUTBOUND_OUTCOMES = ['ok', 'http_error', 'refused', 'failed'] as const;
export const TOKEN_KINDS = ['prompt', 'completion'] as const;

export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];
export type ScheduleOutcome = (typeof SCHEDULE_OUTCOMES)[number];
export type OutboundKind = (typeof OUTBOUND_KINDS)[number];
export type OutboundOutcome = (typeof OUTBOUND_OUTCOMES)[number];

export const metrics = {
  runsStarted: counter('spur_runs_started_total', 'Runs started, by run type', ['run_type']),
  runsFinished: counter('spur_runs_finished_total', 'Runs that ended, by final status', ['status']),
  runDuration: histogram(
    'spur_run_duration_seconds',
    "A run's time from its record to its end, by final status",
    ['status'],
    RUN_SECONDS,
  ),
  nodeDuration: histogram(
    'spur_node_duration_seconds',
    'One execution of a node (an attempt), by node type and how it ended',
    ['node_type', 'status'],
    STEP_SECONDS,
  ),
  llmTokens: counter('spur_llm_tokens_total', 'Tokens of answered model calls, by provider, model and kind', [
    'provider',
    'model',
    'kind',
  ]),
  llmCost: counter('spur_llm_cost_usd_total', 'What answered model calls cost (priced models only), in USD', [
    'provider',
    'model',
  ]),
  pausesOpen: sampledGauge('spur_pauses_open', 'Runs paused for a person, fleet-wide (read by each api)', []),
  webhookDeliveries: fixedCounter('spur_webhook_deliveries_total', 'Webhook deliveries, by what became of them', {
    status: WEBHOOK_STATUSES,
  }),
  scheduleFires: fixedCounter('spur_schedule_fires_total', "Schedules' fires, by outcome", {
    outcome: SCHEDULE_OUTCOMES,
  }),
  callbackDeliveries: fixedCounter('spur_callback_deliveries_total', 'Run callbacks, by how their delivery ended', {
    outcome: CALLBACK_OUTCOMES,
  }),
  sandboxSlots: sampledGauge('spur_sandbox_slots', "This worker's Python sandbox slots, busy or free", ['state']),
  outboundRequests: fixedCounter(
    'spur_outbound_requests_total',
    'Server-side requests through the outbound client, by who made them and outcome',
    { kind: OUTBOUND_KINDS, outcome: OUTBOUND_OUTCOMES },
  ),
  eventStreams: sampledGauge('spur_event_streams', 'Run event streams (SSE) open on this api', []),
  /** Counted by the worker whose activity records an opening (by failures or by hand); `key` is a limit's stored id, a set operators configure. */
  breakerOpenings: counter('spur_breaker_openings_total', "Openings of provider limits' breakers, by limit key", [
    'key',
  ]),
  httpRequests: counter('spur_http_requests_total', 'API requests, by route template and status', ['route', 'status']),
  httpDuration: histogram(
    'spur_http_request_duration_seconds',
    'API request time, by route template',
    ['route'],
    STEP_SECONDS,
  ),
};
