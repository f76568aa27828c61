import { PassThrough } from 'node:stream';
import type { Context } from 'koa';
import type { RunEvents, StoredRunEvent } from '../../db/runs/run-events';
import { FINAL_EVENTS, FINAL_EVENT_OF } from '../../engine/run-events';
import { RequestValidationError } from '../../errors';
import { defineRoute, type MountableRoute } from '../../http/route';
import type { RunEventHub } from './run-event-hub';
import type { StreamRefusal, StreamSlots } from './stream-slots';
import { RunEventsQuery, RunStreamEvent } from './run-events.schemas';
import { RunIdParams } from './runs.schemas';
import { type RunResponse } from '../../runs/response.schemas';

export interface RunEventRouteDeps {
  hub: RunEventHub;
  events: Pick<RunEvents, 'after' | 'exists'>;
  /** The run as GET /run/{id}/ shows it (404 when unknown). */
  runOf(runId: string): Promise<Pick<RunResponse, 'id' | 'status' | 'message' | 'percentage_complete'>>;
  /** Open streams allowed, in total and per client. */
  slots: StreamSlots;
  /** Who a request's stream counts against. */
  clientOf(ctx: Context): string;
}

/** How long a finished run without any event is given for its events to land before it counts as one that has none. */
const LATE_EVENTS_MS = 1000;
/** When a refused client may try again: a slot frees whenever any stream ends, which nothing predicts. */
const STREAM_RETRY_AFTER_SECONDS = 5;

/** `GET /run/{run_id}/events/`: the run's events as server-sent events, resumable, ending after the final one. */
export function runEventRoutes({ hub, events, runOf, slots, clientOf }: RunEventRouteDeps): MountableRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/run/{run_id}/events/',
      summary: "A run's events as they happen (server-sent events; resumable with Last-Event-ID)",
      tags: ['runs'],
      params: RunIdParams,
      query: RunEventsQuery,
      errors: [404, 429],
      response: {
        contentType: 'text/event-stream',
        description: 'Events of the run (see RunStreamEvent); ends after the final one',
        schema: RunStreamEvent,
      },
      handler: async ({ params, query }, ctx) => {
        const after = lastEventId(ctx) ?? query.after ?? 0;
        const slot = slots.take(clientOf(ctx));
        if (!slot.ok) return refuse(ctx, slot);
        // Before any wait below: a client gone during the lookups frees its slot (and stream) too.
        const response = responseEnd(ctx);
        response.onEnd(slot.release);
        const run = await runOf(params.run_id);
        // A client that already has the final event (a reconnect after it) gets an empty, ended stream.
        const last = after > 0 ? await events.after(params.run_id, after - 1, 1) : [];
        const body = new PassThrough();
        ctx.set({
          'Content-Type': 'text/event-stream; charset=utf-8',
          'Cache-Control': 'no-cache',
          'X-Accel-Buffering': 'no',
        });
        ctx.req.socket.setNoDelay(true);
        // Headers go out at once (a client waiting for them must not wait for the first event).
        body.write(': stream\n\n');
        if (last[0] && FINAL_EVENTS.includes(last[0].event)) {
          body.end();
          return body;
        }
        const sink = sseSink(body);
        const final = FINAL_EVENT_OF[run.status];
        if (final && after === 0 && !(await eventsWritten(events, run.id))) {
          // A run that ended with no stored event (a batch row whose chunk attempt died before writing its events): its final event, not stored.
          sink.send({
            seq: 1,
            event: final,
            data: JSON.stringify({
              run_id: run.id,
              status: run.status,
              message: run.message,
              percentage_complete: run.percentage_complete,
            }),
            at: new Date(),
          });
          body.end();
          return body;
        }
        response.onEnd(hub.subscribe(params.run_id, after, sink));
        return body;
      },
    }),
  ];
}

function refuse(ctx: Context, refusal: StreamRefusal): { detail: string } {
  ctx.status = 429;
  ctx.set('Retry-After', String(STREAM_RETRY_AFTER_SECONDS));
  const detail =
    refusal.scope === 'client'
      ? `Too many open event streams for this client: at most ${refusal.limit} at once (SPUR_EVENT_STREAMS_PER_CLIENT); close one or retry later`
      : `Too many open event streams on this server: at most ${refusal.limit} at once (SPUR_EVENT_STREAMS_MAX); retry later`;
  return { detail };
}

/**
 * Runs what `onEnd` is given once the response is over: sent, or its client gone. The socket's
 * own `close` is watched too, so a client that leaves a stream with nothing to send (a run
 * without events) is noticed at once, not at the next write.
 */
function responseEnd(ctx: Context): { onEnd(run: () => void): void } {
  const waiting: (() => void)[] = [];
  let ended = false;
  const socket = ctx.req.socket;
  const end = () => {
    if (ended) return;
    ended = true;
    ctx.res.off('close', end);
    socket.off('close', end);
    for (const run of waiting.splice(0)) run();
  };
  ctx.res.once('close', end);
  socket.once('close', end);
  if (ctx.res.destroyed || socket.destroyed) end();
  return { onEnd: (run) => (ended ? run() : void waiting.push(run)) };
}

/** Events of a finished run land right after its record: a run still without any a moment later has none. */
async function eventsWritten(events: Pick<RunEvents, 'exists'>, runId: string): Promise<boolean> {
  if (await events.exists(runId)) return true;
  await new Promise((r) => setTimeout(r, LATE_EVENTS_MS));
  return events.exists(runId);
}

function lastEventId(ctx: Context): number | undefined {
  const raw = ctx.get('Last-Event-ID');
  if (raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) {
    throw new RequestValidationError([
      {
        type: 'int_parsing',
        loc: ['header', 'last-event-id'],
        msg: 'Input should be a valid integer, at least 0',
        input: raw,
      },
    ]);
  }
  return n;
}

function sseSink(body: PassThrough) {
  return {
    send: (e: StoredRunEvent) => body.write(`id: ${e.seq}\nevent: ${e.event}\ndata: ${e.data}\n\n`),
    // No `id:`: a piece leaves the client's Last-Event-ID as it was.
    delta: (nodeId: string, text: string) =>
      void body.write(`event: task.delta\ndata: ${JSON.stringify({ node_id: nodeId, text })}\n\n`),
    drained: () =>
      new Promise<void>((resolve) => {
        if (body.destroyed || !body.writableNeedDrain) return resolve();
        const done = () => {
          body.off('drain', done);
          body.off('close', done);
          resolve();
        };
        body.once('drain', done);
        body.once('close', done);
      }),
    comment: (text: string) => void body.write(`: ${text}\n\n`),
    end: () => body.end(),
  };
}
