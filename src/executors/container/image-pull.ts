// Makes sure a container's image is there before it is created, as the pull policy says
// (always, missing, never), pulling with the registry's credentials from registryAuths.
import { docker, daemonMessage, isNotFound, withinDeadline } from './docker.ts';
import { authFor, type RegistryAuths } from './registry-auth.ts';

export type PullPolicy = 'always' | 'missing' | 'never';

/** Undefined when the image is ready; else the daemon's (or the registry's) message. */
export async function ensureImage(image: string, policy: PullPolicy, platform: string | undefined, auths: RegistryAuths | undefined, signal: AbortSignal): Promise<string | undefined> {
  // With `never`, an absent image is left to the create call, whose message names it.
  if (policy === 'never') return undefined;
  if (policy === 'missing') {
    try {
      await withinDeadline(docker().getImage(image).inspect());
      return undefined;
    } catch (error) {
      if (!isNotFound(error)) return daemonMessage(error);
    }
  }
  return pull(image, platform, auths, signal);
}

async function pull(image: string, platform: string | undefined, auths: RegistryAuths | undefined, signal: AbortSignal): Promise<string | undefined> {
  const auth = authFor(image, auths);
  try {
    const stream = await docker().pull(image, {
      ...(platform ? { platform } : {}),
      ...(auth ? { authconfig: auth } : {}),
      abortSignal: signal,
    });
    // A pull the daemon accepted reports its failure inside the progress stream.
    const events = await new Promise<Array<{ error?: string; errorDetail?: { message?: string } }>>((resolve, reject) => {
      docker().modem.followProgress(stream, (error: Error | null, output: Array<{ error?: string }>) => (error ? reject(error) : resolve(output)));
    });
    const failure = events.find((event) => event.error !== undefined || event.errorDetail?.message !== undefined);
    if (failure) return `pull ${image}: ${failure.errorDetail?.message ?? failure.error}`;
    return undefined;
  } catch (error) {
    if (signal.aborted) return `pull ${image}: stopped`;
    return `pull ${image}: ${daemonMessage(error)}`;
  }
}
