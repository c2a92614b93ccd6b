import { formatTime } from '../format';

export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span aria-label="none">—</span>;
  return <time dateTime={iso}>{formatTime(iso)}</time>;
}
