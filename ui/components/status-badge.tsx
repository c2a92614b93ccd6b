import { statusText } from '../format';

/** A status as a coloured badge that also says it in words. */
export function StatusBadge({ label, testId }: { label: string; testId?: string }) {
  return (
    <span class={`badge status-${label || 'unknown'}`} data-testid={testId} data-status={label}>
      {statusText(label)}
    </span>
  );
}
