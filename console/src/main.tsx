import 'uplot/dist/uPlot.min.css';
import '../console.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from './api';
import { BASE, follow } from './navigation';
import { RunPage } from './pages/run';
import { RunsPage } from './pages/runs';
import { ApprovalsPage } from './pages/approvals/approvals-page';
import { SchedulesPage } from './pages/schedules/schedules-page';
import { TriggersPage } from './pages/triggers/triggers-page';
import { UsagePage } from './pages/usage/usage-page';
import { AccessLink, AccessPage } from './pages/access/access-page';
import { evalsPageAt } from './pages/evals/evals-route';
import { type Me, MeContext } from './session';

/** The console's screens, as its navigation lists them. */
const PAGES = [
  ['/runs', 'Runs'],
  ['/approvals', 'Approvals'],
  ['/schedules', 'Schedules'],
  ['/triggers', 'Triggers'],
  ['/usage', 'Usage'],
  ['/evals', 'Evals'],
] as const;

function useLocation(): { path: string; search: string } {
  const read = () => ({ path: location.pathname.slice(BASE.length) || '/', search: location.search });
  const [where, setWhere] = useState(read);
  useEffect(() => {
    const moved = () => setWhere(read());
    addEventListener('popstate', moved);
    return () => removeEventListener('popstate', moved);
  }, []);
  return where;
}

function Page({ path, search }: { path: string; search: string }) {
  const run = /^\/runs\/([^/]+)\/?$/.exec(path);
  if (run?.[1]) return <RunPage runId={decodeURIComponent(run[1])} />;
  if (path === '/' || path === '/runs' || path === '/runs/') return <RunsPage search={search} />;
  if (path === '/approvals' || path === '/approvals/') return <ApprovalsPage />;
  if (path === '/schedules' || path === '/schedules/') return <SchedulesPage />;
  if (path === '/triggers' || path === '/triggers/') return <TriggersPage search={search} />;
  if (path === '/usage' || path === '/usage/') return <UsagePage />;
  if (path === '/access' || path === '/access/') return <AccessPage />;
  const evals = evalsPageAt(path);
  if (evals) return evals;
  return (
    <p role="alert" class="error">
      No such page: {path}
    </p>
  );
}

function Console() {
  const where = useLocation();
  const [me, setMe] = useState<Me | null>(null);
  useEffect(() => {
    void api<Me>('/access/me/').then(setMe);
  }, []);
  useEffect(() => {
    document.querySelector<HTMLElement>('main h1')?.focus();
  }, [where.path]);
  return (
    <MeContext.Provider value={me}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <nav aria-label="Console">
          <strong>Spur console</strong>
          {PAGES.map(([path, label]) => (
            <a href={`${BASE}${path}`} onClick={(event) => follow(event, path)}>
              {label}
            </a>
          ))}
          <AccessLink />
          <a href="/">Workflows (PySpur UI)</a>
        </nav>
        {me && (
          <span class="who">
            {me.username} · {me.role ?? 'no role'} · {me.workspace_id}
          </span>
        )}
      </header>
      <main id="main">
        <Page path={where.path} search={where.search} />
      </main>
    </MeContext.Provider>
  );
}

render(<Console />, document.getElementById('console') as HTMLElement);
