import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from './api';

/** What to show of a failure: the API's own message when it answered, else the browser's. */
export function messageOf(err: unknown): string {
  return err instanceof ApiError ? err.message : String(err);
}

/** A GET of the API, read again when `path` changes or `reload` is called; `data` is null until it answers. */
export function useApi<T>(path: string | null): {
  data: T | null;
  error: string | null;
  reload: () => Promise<void>;
} {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = async () => {
    if (path === null) return;
    try {
      setData(await api<T>(path));
      setError(null);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  useEffect(() => {
    setData(null);
    setError(null);
    void load();
  }, [path]);
  return { data, error, reload: load };
}

/**
 * An action's state: `act` runs one call at a time, keeps its failure as the API's message and an
 * optional notice of its success (shown in a live region, so screen readers hear it too).
 */
export function useAction(): {
  busy: boolean;
  error: string | null;
  notice: string | null;
  act: (work: () => Promise<string | void>) => Promise<void>;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const act = async (work: () => Promise<string | void>) => {
    setBusy(true);
    setError(null);
    setNotice(null);
    try {
      const said = await work();
      if (said) setNotice(said);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, notice, act };
}

/** A screen's state line: the API's error as an alert, a notice as a status, or "Loading…" while nothing has come. */
export function Status({
  error,
  notice,
  loading,
}: {
  error?: string | null;
  notice?: string | null;
  loading?: boolean;
}) {
  return (
    <>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {notice && (
        <p role="status" class="notice">
          {notice}
        </p>
      )}
      {loading && !error && <p aria-live="polite">Loading…</p>}
    </>
  );
}
