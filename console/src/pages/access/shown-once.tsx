import type { NewKey } from './types';

/**
 * The key just made, shown this once: the API keeps only its hash and never answers it again. It
 * lives in the page's memory alone (no storage, no address), so a reload or "Done" forgets it. The
 * live region is always there, so a screen reader announces the key's arrival.
 */
export function ShownOnce({ made, onDone }: { made: NewKey | null; onDone: () => void }) {
  return (
    <div role="status" class={made ? 'secret' : undefined}>
      {made && (
        <>
          <p>
            <strong>
              Key {made.id} ({made.name}) is made. Copy it now: it will not be shown again.
            </strong>
          </p>
          <p>
            <code class="new-key">{made.key}</code>
          </p>
          <button type="button" onClick={onDone}>
            Done: forget the key
          </button>
        </>
      )}
    </div>
  );
}
