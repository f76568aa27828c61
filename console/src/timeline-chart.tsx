import { timelineOf } from './timeline';
import { duration } from './format';
import type { Run } from './types';

const ROW = 22;
const LABEL = 160;
const WIDTH = 900;

/** The run's timeline as an SVG: one row per task, its failed attempts, waits and pauses drawn apart from its run time. */
export function TimelineChart({ run }: { run: Run }) {
  const timeline = timelineOf(run, Date.now());
  const span = timeline.toMs - timeline.fromMs;
  const x = (ms: number) => LABEL + ((ms - timeline.fromMs) / span) * (WIDTH - LABEL - 10);
  const height = timeline.rows.length * ROW + 24;
  return (
    <figure class="timeline">
      <svg
        role="img"
        aria-label={`Timeline of ${timeline.rows.length} tasks over ${duration(span / 1000)}`}
        viewBox={`0 0 ${WIDTH} ${height}`}
        width="100%"
      >
        {timeline.rows.map((row, i) => (
          <g data-node={row.nodeId}>
            <text x={4} y={i * ROW + 15}>
              {row.nodeId}
            </text>
            {row.bars.map((bar) => (
              <rect
                class={`bar bar-${bar.kind} status-${row.status.toLowerCase()}`}
                data-kind={bar.kind}
                x={x(bar.startMs)}
                y={i * ROW + 4}
                width={Math.max(2, x(bar.endMs) - x(bar.startMs))}
                height={ROW - 8}
              >
                <title>
                  {`${row.nodeId}: ${bar.note ?? row.status}, ${duration((bar.endMs - bar.startMs) / 1000)}`}
                </title>
              </rect>
            ))}
          </g>
        ))}
        <text x={LABEL} y={height - 4}>
          0
        </text>
        <text x={WIDTH - 10} y={height - 4} text-anchor="end">
          {duration(span / 1000)}
        </text>
      </svg>
      <figcaption>
        <span class="key key-run">running</span> <span class="key key-wait">waiting</span>{' '}
        <span class="key key-pause">paused for a person</span>{' '}
        <span class="key key-attempt">an attempt that failed</span>
      </figcaption>
    </figure>
  );
}
