import { api } from '../../api';
import { when } from '../../format';
import { Status, useAction, useApi } from '../../loading';
import { useCan } from '../../session';
import { TableHead } from '../../table-head';

/** GET /api/limits/ (or /limits/fleet/): a limit on model requests and its breaker. */
interface Limit {
  key: string;
  max_concurrent?: number;
  requests_per_minute?: number;
  tokens_per_minute?: number;
  breaker?: { failures: number; window_seconds: number; open_seconds: number };
  breaker_state?: {
    state: 'closed' | 'open' | 'half_open';
    since: string | null;
    opened_by: 'failures' | 'operator' | null;
    failures_in_window: number;
    probe_after: string | null;
  };
}

function rule(limit: Limit): string {
  const parts = [
    limit.max_concurrent && `${limit.max_concurrent} at once`,
    limit.requests_per_minute && `${limit.requests_per_minute} requests/min`,
    limit.tokens_per_minute && `${limit.tokens_per_minute} tokens/min`,
    limit.breaker && `breaker: ${limit.breaker.failures} failures in ${limit.breaker.window_seconds} s`,
  ];
  return parts.filter(Boolean).join(' · ');
}

function breaker(limit: Limit): string {
  const s = limit.breaker_state;
  if (!s) return 'closed';
  if (s.state === 'closed')
    return s.failures_in_window > 0 ? `closed (${s.failures_in_window} recent failures)` : 'closed';
  const by = s.opened_by === 'operator' ? 'by an operator' : 'by failures';
  return `${s.state.replace('_', '-')} ${by} since ${when(s.since)}${s.probe_after ? `, probes at ${when(s.probe_after)}` : ''}`;
}

/**
 * Provider limits of the workspace or of the fleet, with their breakers; who may manage them
 * (`limits.manage`, `fleet.manage`) opens or closes a breaker by hand.
 */
export function LimitsTable({ scope }: { scope: 'workspace' | 'fleet' }) {
  const path = scope === 'fleet' ? '/limits/fleet/' : '/limits/';
  const { data: limits, error, reload } = useApi<Limit[]>(path);
  const canSwitch = useCan(scope === 'fleet' ? 'fleet.manage' : 'limits.manage');
  const action = useAction();
  const title = scope === 'fleet' ? 'Fleet-wide limits' : 'Provider limits';
  const switchTo = (key: string, state: 'open' | 'closed') =>
    action.act(async () => {
      await api(`${path}breaker/`, { method: 'POST', body: { key, state } });
      await reload();
      return `Breaker of ${key} ${state === 'open' ? 'opened' : 'closed'}: runs take it within moments`;
    });
  return (
    <section aria-labelledby={`limits-${scope}`}>
      <h2 id={`limits-${scope}`}>{title}</h2>
      <Status error={error ?? action.error} notice={action.notice} loading={limits === null} />
      {limits && (
        <table class="limits" data-scope={scope}>
          <caption>{limits.length === 0 ? 'No limits' : `${limits.length} limits`}</caption>
          <TableHead columns={['Provider or model', 'Limit', 'Breaker', canSwitch && 'Actions']} />
          <tbody>
            {limits.map((l) => {
              const open = l.breaker_state !== undefined && l.breaker_state.state !== 'closed';
              return (
                <tr data-key={l.key}>
                  <td>{l.key}</td>
                  <td>{rule(l)}</td>
                  <td>{breaker(l)}</td>
                  {canSwitch && (
                    <td>
                      <button
                        type="button"
                        disabled={action.busy}
                        onClick={() => void switchTo(l.key, open ? 'closed' : 'open')}
                      >
                        {open ? 'Close' : 'Open'} breaker of {l.key}
                      </button>
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
