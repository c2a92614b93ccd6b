// The archive executor's failures: each kind exits with the code Dagu's archive executor gives it,
// and its message starts as Dagu's does ("archive: extraction failed: ...").
export type ArchiveErrorKind = 'config' | 'sourceNotFound' | 'destination' | 'formatDetection' | 'extract' | 'create' | 'corrupted';

const KINDS: Record<ArchiveErrorKind, { exitCode: number; prefix: string }> = {
  config: { exitCode: 2, prefix: 'archive: configuration error' },
  sourceNotFound: { exitCode: 3, prefix: 'archive: source not found' },
  destination: { exitCode: 4, prefix: 'archive: destination error' },
  formatDetection: { exitCode: 5, prefix: 'archive: format detection failed' },
  extract: { exitCode: 6, prefix: 'archive: extraction failed' },
  create: { exitCode: 7, prefix: 'archive: creation failed' },
  corrupted: { exitCode: 12, prefix: 'archive: corrupted archive' },
};

export class ArchiveError extends Error {
  constructor(readonly kind: ArchiveErrorKind, detail: string) {
    super(`${KINDS[kind].prefix}: ${detail}`);
  }

  get exitCode(): number {
    return KINDS[this.kind].exitCode;
  }

  /** Wraps a library's or the system's error; an ArchiveError already says what failed. */
  static from(kind: ArchiveErrorKind, error: unknown): ArchiveError {
    if (error instanceof ArchiveError) return error;
    return new ArchiveError(kind, (error as Error)?.message ?? String(error));
  }
}
