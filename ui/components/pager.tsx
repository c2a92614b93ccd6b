// Previous/next paging for a listing; `label` names what is paged, for screen readers.

interface Props {
  label: string;
  page?: number;
  totalPages?: number;
  hasPrev: boolean;
  hasNext: boolean;
  onPrev: () => void;
  onNext: () => void;
}

export function Pager({ label, page, totalPages, hasPrev, hasNext, onPrev, onNext }: Props) {
  return (
    <nav class="pager" aria-label={`${label} pages`} data-testid="pager">
      <button type="button" onClick={onPrev} disabled={!hasPrev} data-testid="pager-prev">Previous</button>
      {page !== undefined && (
        <span data-testid="pager-position">
          Page {page}{totalPages !== undefined ? ` of ${Math.max(totalPages, 1)}` : ''}
        </span>
      )}
      <button type="button" onClick={onNext} disabled={!hasNext} data-testid="pager-next">Next</button>
    </nav>
  );
}
