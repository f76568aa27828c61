import { useContext } from 'preact/hooks';
import { Status, useApi } from '../../loading';
import { MeContext } from '../../session';
import { PauseCard } from './pause-card';
import { type Paused, mayDecide } from './paused';

/**
 * The pauses waiting for a person: first those the signed-in user may decide (approve, override or
 * decline), then those waiting for someone else, to read.
 */
export function ApprovalsPage() {
  const { data: paused, error, reload } = useApi<Paused[]>('/wf/paused_workflows/?page_size=100');
  const me = useContext(MeContext);
  const mine = paused?.filter((p) => mayDecide(p, me)) ?? [];
  const others = paused?.filter((p) => !mayDecide(p, me)) ?? [];
  return (
    <section aria-labelledby="approvals-title">
      <h1 id="approvals-title">Approvals</h1>
      <Status error={error} loading={paused === null} />
      {paused && (
        <>
          <h2 class="inbox-part">Waiting for you ({mine.length})</h2>
          {mine.length === 0 && <p>Nothing waits for your decision.</p>}
          {mine.map((item) => (
            <PauseCard item={item} canDecide onDecided={reload} />
          ))}
          {others.length > 0 && (
            <>
              <h2 class="inbox-part">Waiting for someone else ({others.length})</h2>
              {others.map((item) => (
                <PauseCard item={item} canDecide={false} onDecided={reload} />
              ))}
            </>
          )}
        </>
      )}
    </section>
  );
}
