import { answeredWithin } from '../answered-within';
import type { AuditFields, AuditTrail } from '../db/audit-trail';
import type { HealthProbe } from '../health/run-probes';
import type { Logger } from '../logger';

/** Entries one process keeps in memory while MongoDB refuses them; past it they are in the log only. */
const BACKLOG_MAX = 10_000;
/**
 * How long the health check waits on a flush of waiting entries before it reports them. Well
 * inside API_PROBE_TIMEOUT_MS: a flush MongoDB keeps refusing tries each entry many times, and a
 * check that ran out its time would say "no answer" instead of what waits.
 */
const PROBE_FLUSH_WAIT_MS = 1000;

export interface AuditWriter {
  /** Stores the entry, or keeps it to store later; never throws. */
  record(fields: AuditFields): Promise<void>;
  /** `/api/health`'s `audit_trail` check: fails while entries wait to be stored. */
  probe: HealthProbe;
}

/**
 * What happens when MongoDB refuses an audit entry. The request is answered as it was decided:
 * by the time its entry is written its effect has happened (a workflow saved, a run started), and
 * answering 503 instead would tell the client it had not, inviting a retry that does it twice; a
 * refused request changed nothing to begin with. The failure is not silent: the entry (which holds
 * no secret) goes to the log at error level, it is counted, and it is kept in memory and stored
 * before the next entry, or by the next health check, once MongoDB takes writes again. While any
 * wait, the instance's health check fails (503, `audit_trail`), so an orchestrator takes it out of
 * service. What is lost is what was only in memory when the process died: the log still has it.
 */
export function auditWriter(trail: Pick<AuditTrail, 'append'>, logger: Logger): AuditWriter {
  const backlog: AuditFields[] = [];
  let late = 0;
  let logOnly = 0;
  let flushing: Promise<void> | null = null;

  /** Stores the waiting entries, oldest first; one flush at a time. */
  function flush(): Promise<void> {
    flushing ??= (async () => {
      try {
        for (let next = backlog[0]; next; next = backlog[0]) {
          await trail.append(next);
          backlog.shift();
        }
      } finally {
        flushing = null;
      }
    })();
    return flushing;
  }

  return {
    async record(fields) {
      try {
        if (backlog.length > 0) await flush();
        await trail.append(fields);
      } catch (err) {
        late++;
        if (backlog.length < BACKLOG_MAX) backlog.push(fields);
        else logOnly++;
        logger.error(
          { err: String(err), audit_entry: fields, waiting: backlog.length, log_only: logOnly },
          'audit entry not stored: MongoDB refused it; kept to store later, and the request was answered as decided',
        );
      }
    },
    async probe() {
      // A flush still going after the wait goes on, and the next check waits on it again.
      if (backlog.length > 0) await answeredWithin(flush(), PROBE_FLUSH_WAIT_MS, undefined);
      if (backlog.length > 0)
        throw new Error(`${backlog.length} audit entries wait to be stored: MongoDB refused them (see the log)`);
      if (late === 0) return undefined;
      return `${late - logOnly} entries stored late${logOnly > 0 ? `, ${logOnly} only in the log` : ''}`;
    },
  };
}
