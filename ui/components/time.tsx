import { formatTime } from '../format';

export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span class="muted">—</span>;
  return <time dateTime={iso}>{formatTime(iso)}</time>;
}
