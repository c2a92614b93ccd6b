// The page's failures, shown by the alert region of the layout. A page reports an error and
// goes on; navigation clears what is shown.
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from './api';
import { currentSession as session, loadSession } from './session';

export interface Alert { id: number; message: string; signIn: boolean }

let alerts: Alert[] = [];
let nextId = 1;
const listeners = new Set<(list: Alert[]) => void>();

function publish(list: Alert[]): void {
  alerts = list;
  for (const listener of listeners) listener(alerts);
}

export function reportError(error: unknown): void {
  const signIn = error instanceof ApiError && error.status === 401;
  // A session that ended (expired, password changed, user removed): the navigation and the
  // actions shown follow, once the API says who this is now.
  if (signIn && session().state === 'signed-in') void loadSession();
  const message = signIn
    ? 'Sign in required'
    : error instanceof Error ? error.message : String(error);
  // The same failure repeated (a live page re-reading) is shown once.
  if (alerts.some((a) => a.message === message)) return;
  publish([...alerts.slice(-2), { id: nextId++, message, signIn }]);
}

export function dismissAlert(id: number): void {
  publish(alerts.filter((a) => a.id !== id));
}

export function clearAlerts(): void {
  if (alerts.length) publish([]);
}

export function useAlerts(): Alert[] {
  const [list, setList] = useState(alerts);
  useEffect(() => {
    listeners.add(setList);
    return () => void listeners.delete(setList);
  }, []);
  return list;
}
