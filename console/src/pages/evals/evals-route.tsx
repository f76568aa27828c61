import type { JSX } from 'preact';
import { ComparisonPage } from './comparison-page';
import { EvalRunPage } from './eval-run-page';
import { EvalsPage } from './evals-page';
import { SuitePage } from './suite-page';

/** The Evals screen's pages by address (below /console), or null for an address not theirs. */
export function evalsPageAt(path: string): JSX.Element | null {
  if (path === '/evals' || path === '/evals/') return <EvalsPage />;
  const [, kind, id] = /^\/evals\/(runs|compare|suites)\/([^/]+)\/?$/.exec(path) ?? [];
  if (!kind || !id) return null;
  const key = decodeURIComponent(id);
  if (kind === 'runs') return <EvalRunPage runId={key} />;
  if (kind === 'compare') return <ComparisonPage comparisonId={key} />;
  return <SuitePage suiteId={key} />;
}
