import { Readable } from 'node:stream';
import type { AuditFilter, AuditTrail, ChainedEntry } from '../../db/audit-trail';
import { defineRoute, type MountableRoute } from '../../http/route';
import { z } from '../../zod';
import {
  AuditEntryResponse,
  AuditFilterQuery,
  type AuditFilterInput,
  AuditListQuery,
  AuditVerifyResponse,
} from './audit.schemas';

const tags = ['access'];

const filterOf = (q: AuditFilterInput): AuditFilter => ({
  ...(q.actor !== undefined ? { actor: q.actor } : {}),
  ...(q.action !== undefined ? { action: q.action } : {}),
  ...(q.target_type !== undefined ? { target_type: q.target_type } : {}),
  ...(q.target_id !== undefined ? { target_id: q.target_id } : {}),
  ...(q.request_id !== undefined ? { request_id: q.request_id } : {}),
  ...(q.from !== undefined ? { from: new Date(q.from) } : {}),
  ...(q.to !== undefined ? { to: new Date(q.to) } : {}),
});

/** An entry as clients see it: without its place in the chain's arithmetic (seq, mac). */
function entryView(e: ChainedEntry): z.output<typeof AuditEntryResponse> {
  return {
    id: e._id,
    time: new Date(e.time).toISOString(),
    actor: {
      ...(e.actor.user_id ? { user_id: e.actor.user_id } : {}),
      ...(e.actor.key_id ? { key_id: e.actor.key_id } : {}),
      via: e.actor.via,
    },
    action: e.action,
    target: { type: e.target.type, id: e.target.id ?? null },
    outcome: e.outcome,
    request_id: e.request_id,
    ip: e.ip,
  };
}

async function* jsonLines(pages: AsyncIterable<ChainedEntry[]>): AsyncGenerator<string> {
  for await (const page of pages) yield page.map((e) => `${JSON.stringify(entryView(e))}\n`).join('');
}

/** The audit trail: admins read it, export it and check that nobody changed it. */
export function auditRoutes(trail: AuditTrail): MountableRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/access/audit/',
      permission: 'audit.read',
      summary: 'The audit trail, newest first: every state-changing request, sign-in and decision, refused ones too',
      tags,
      query: AuditListQuery,
      response: z.array(AuditEntryResponse),
      handler: async ({ query }) => {
        const { page, page_size, ...filter } = query;
        return (await trail.list(filterOf(filter), { page, page_size })).map(entryView);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/access/audit/export/',
      permission: 'audit.read',
      summary: 'The audit trail as JSON lines, oldest first, streamed (the same filters as the listing)',
      tags,
      query: AuditFilterQuery,
      response: { contentType: 'application/x-ndjson', description: 'One AuditEntry per line' },
      handler: ({ query }, ctx) => {
        ctx.type = 'application/x-ndjson';
        ctx.set('Cache-Control', 'no-store');
        return Readable.from(jsonLines(trail.pages(filterOf(query))), { objectMode: false });
      },
    }),
    defineRoute({
      method: 'get',
      path: '/access/audit/verify/',
      permission: 'audit.read',
      summary: 'Walk the whole chain: ok, or the first entry changed or removed in the database',
      tags,
      response: AuditVerifyResponse,
      handler: () => trail.verify(),
    }),
  ];
}
