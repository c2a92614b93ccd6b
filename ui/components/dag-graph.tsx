// A DAG's steps as boxes joined by arrows (dependency to dependant), in inline SVG. Each box is
// coloured by its step's status and says it in words to assistive technology and in its tooltip.
// The drawing scrolls in both directions, so hundreds of steps stay usable.
import { useMemo } from 'preact/hooks';
import { defaultSizes, layoutGraph, type LayoutStep } from '../graph-layout';
import { statusText } from '../format';
import './graph.css';

const { nodeWidth: W, nodeHeight: H } = defaultSizes;
// What fits in a box at the page's font size; the whole name is in the tooltip.
const maxChars = 19;

export interface DagGraphProps {
  steps: readonly LayoutStep[];
  /** statusLabel by step name; a step without one is drawn as not run. */
  statuses: ReadonlyMap<string, string>;
  selected?: string;
  /** Makes each box a button. */
  onSelect?: (step: string) => void;
  label: string;
}

export function DagGraph({ steps, statuses, selected, onSelect, label }: DagGraphProps) {
  // The layout depends only on the steps, not on statuses: live updates only recolour.
  const key = JSON.stringify(steps.map((s) => [s.name, s.depends ?? []]));
  const layout = useMemo(() => layoutGraph(steps), [key]);
  if (layout.nodes.length === 0) return null;
  return (
    <div class="graph-scroll" data-testid="dag-graph" role="group" aria-label={label}>
      <svg width={layout.width} height={layout.height} viewBox={`0 0 ${layout.width} ${layout.height}`} class="graph">
        <defs>
          <marker id="graph-arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="8" markerHeight="8" orient="auto-start-reverse">
            <path d="M0,0 L8,4 L0,8 z" class="graph-arrow-head" />
          </marker>
        </defs>
        <g aria-hidden="true">
          {layout.edges.map((e) => {
            const mid = (e.x1 + e.x2) / 2;
            return <path key={`${e.from}\u0000${e.to}`} class="graph-edge" data-testid={`graph-edge-${e.from}-${e.to}`} d={`M${e.x1},${e.y1} C${mid},${e.y1} ${mid},${e.y2} ${e.x2 - 1},${e.y2}`} marker-end="url(#graph-arrow)" />;
          })}
        </g>
        {layout.nodes.map((n) => {
          const status = statuses.get(n.name) || 'none';
          const words = status === 'none' ? 'not run' : statusText(status);
          const text = n.name.length > maxChars ? `${n.name.slice(0, maxChars - 1)}…` : n.name;
          const activate = onSelect ? () => onSelect(n.name) : undefined;
          return (
            <g
              key={n.name}
              class={`graph-node status-${status}${selected === n.name ? ' selected' : ''}${onSelect ? ' clickable' : ''}`}
              transform={`translate(${n.x},${n.y})`}
              data-testid={`graph-node-${n.name}`}
              data-status={status}
              role={onSelect ? 'button' : 'img'}
              tabIndex={onSelect ? 0 : undefined}
              aria-pressed={onSelect ? selected === n.name : undefined}
              aria-label={`Step ${n.name}: ${words}`}
              onClick={activate}
              onKeyDown={activate && ((event: KeyboardEvent) => {
                if (event.key !== 'Enter' && event.key !== ' ') return;
                event.preventDefault();
                activate();
              })}
            >
              <title>{`${n.name}: ${words}`}</title>
              <rect width={W} height={H} rx="6" />
              <circle cx="14" cy={H / 2} r="5" class="graph-dot" />
              <text x="26" y={H / 2} dominant-baseline="central">{text}</text>
            </g>
          );
        })}
      </svg>
    </div>
  );
}
