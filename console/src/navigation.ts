/** The console's pages live under /console/; links move by history, not reloads. */
export const BASE = '/console';

export function navigate(path: string): void {
  history.pushState(null, '', `${BASE}${path}`);
  dispatchEvent(new PopStateEvent('popstate'));
}

/** An in-console link's click: followed by history (a modified click opens a tab as usual). */
export function follow(event: MouseEvent, path: string): void {
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(path);
}
