import { useEffect, useRef } from 'preact/hooks';

/**
 * Calls `reload` every `everyMs` while `active` holds (an eval run or comparison still going: the
 * API has no event stream for them). The next call waits for the previous one's answer, so a slow
 * API is never asked twice at once.
 */
export function useRefreshWhile(active: boolean, reload: () => Promise<void>, everyMs = 2000): void {
  const latest = useRef(reload);
  latest.current = reload;
  useEffect(() => {
    if (!active) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout>;
    const tick = async () => {
      await latest.current();
      if (!stopped) timer = setTimeout(() => void tick(), everyMs);
    };
    timer = setTimeout(() => void tick(), everyMs);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [active, everyMs]);
}
