// A failed step's error with the end of its stderr, in Dagu's form: the executors add the tail,
// the command's progress shows an error without it.
const HEADING = '\nrecent stderr (tail):\n';

export function withStderrTailText(error: string, tail: string): string {
  return tail === '' ? error : `${error}${HEADING}${tail}`;
}

/** A step's error on one line's worth: without the tail of its stderr. */
export function withoutStderrTail(error: string): string {
  const at = error.indexOf(HEADING);
  return at === -1 ? error : error.slice(0, at);
}
