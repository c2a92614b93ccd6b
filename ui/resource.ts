// Reading one API answer for a page: the answer, whether it is loading, and a reload that live
// events call. Failures go to the alert region; the last good answer stays shown.
// A page whose identity changes (another run, another DAG) is keyed, so it starts empty.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { reportError } from './alerts';

export interface Resource<T> { data: T | undefined; loading: boolean; failed: boolean; reload: () => void }

export function useResource<T>(load: (() => Promise<T>) | null, deps: unknown[]): Resource<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [loading, setLoading] = useState(load !== null);
  const [failed, setFailed] = useState(false);
  const generation = useRef(0);
  const loader = useRef(load);
  loader.current = load;

  const run = useCallback(() => {
    const fn = loader.current;
    if (!fn) return;
    const mine = ++generation.current;
    setLoading(true);
    fn().then(
      (value) => {
        // An older request answering late must not overwrite a newer answer.
        if (mine !== generation.current) return;
        setData(value);
        setFailed(false);
        setLoading(false);
      },
      (error: unknown) => {
        if (mine !== generation.current) return;
        reportError(error);
        setFailed(true);
        setLoading(false);
      },
    );
  }, []);

  // New parameters (a filter, a page) keep the old answer shown until the new one arrives.
  useEffect(run, deps);

  return { data, loading, failed, reload: run };
}
