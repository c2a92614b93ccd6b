// How a container task ends.

/** How a container task ended: its process exited, a stop ended it, or the daemon refused. */
export type Outcome =
  | { kind: 'exited'; exitCode: number }
  | { kind: 'stopped'; signal: string }
  | { kind: 'failed'; message: string };
