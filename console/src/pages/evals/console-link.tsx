import type { ComponentChildren } from 'preact';
import { BASE, follow } from '../../navigation';

/** A link to another console page, followed by history (a modified click opens a tab as usual). */
export function ConsoleLink({ to, children }: { to: string; children: ComponentChildren }) {
  return (
    <a href={`${BASE}${to}`} onClick={(event) => follow(event, to)}>
      {children}
    </a>
  );
}
