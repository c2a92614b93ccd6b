// A small line chart of one resource series, drawn as inline SVG: the last hour's points, the
// newest value in words beside the title (a chart says nothing to a screen reader by itself).
export interface Point { timestamp: number; value: number }

const WIDTH = 320;
const HEIGHT = 90;

export function LineChart({ id, title, unit, points, max }: { id: string; title: string; unit: string; points: Point[]; max?: number }) {
  const last = points.length > 0 ? points[points.length - 1].value : undefined;
  const top = max ?? Math.max(1, ...points.map((point) => point.value)) * 1.1;
  const first = points.length > 0 ? points[0].timestamp : 0;
  const span = Math.max(1, (points.length > 0 ? points[points.length - 1].timestamp : 1) - first);
  const line = points.map((point, index) => {
    const x = ((point.timestamp - first) / span) * WIDTH;
    const y = HEIGHT - (Math.min(point.value, top) / top) * HEIGHT;
    return `${index === 0 ? 'M' : 'L'}${x.toFixed(1)},${y.toFixed(1)}`;
  }).join(' ');
  const now = last === undefined ? 'no sample yet' : `${formatValue(last)}${unit}`;
  return (
    <figure class="chart" data-testid={`resource-chart-${id}`}>
      <figcaption><span>{title}</span> <strong data-testid={`resource-now-${id}`}>{now}</strong></figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} preserveAspectRatio="none" role="img" aria-label={`${title}, last hour: now ${now}`}>
        <line x1="0" y1={HEIGHT - 0.5} x2={WIDTH} y2={HEIGHT - 0.5} class="chart-axis" />
        {points.length > 1 && <path d={line} class="chart-line" />}
      </svg>
    </figure>
  );
}

function formatValue(value: number): string {
  return value >= 10 ? value.toFixed(0) : value.toFixed(2);
}
