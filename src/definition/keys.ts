// Every key the definition format allows.

export const ROOT_KEYS = [
  'name', 'description', 'tags', 'group', 'type', 'schedule', 'skipIfSuccessful', 'restartWaitSec',
  'maxActiveRuns', 'maxActiveSteps', 'timeoutSec', 'delaySec', 'maxCleanUpTimeSec', 'preconditions', 'precondition',
  'runConfig', 'params', 'env', 'secrets', 'dotenv', 'workingDir', 'logDir', 'histRetentionDays',
  'maxOutputSize', 'shell', 'container', 'ssh', 'registryAuths', 'queue', 'workerSelector', 'otel',
  'mailOn', 'errorMail', 'infoMail', 'smtp', 'handlerOn', 'steps',
] as const;

export const STEP_KEYS = [
  'name', 'id', 'description', 'command', 'script', 'depends', 'dir', 'workingDir', 'shell',
  'shellPackages', 'stdout', 'stderr', 'output', 'env', 'call', 'run', 'params', 'parallel',
  'maxConcurrent', 'preconditions', 'precondition', 'continueOn', 'retryPolicy', 'repeatPolicy', 'mailOnError',
  'signalOnStop', 'timeoutSec', 'executor', 'workerSelector',
] as const;

export function closestKey(key: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  const limit = Math.max(2, Math.floor(key.length / 3));
  for (const candidate of candidates) {
    // The lengths alone put a long key out of reach: no need to compare every character of it.
    if (Math.abs(key.length - candidate.length) > limit) continue;
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= limit ? best : undefined;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const saved = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = saved;
    }
  }
  return row[b.length];
}
