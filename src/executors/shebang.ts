// The program a step's script names on its first line (`#!/usr/bin/env python3`), which reads the
// script unless the step set a shell: the same rule for a local step and a remote (ssh) one.
import type { StepTask } from '../core/index.ts';

/** The shebang line's text after `#!`, trimmed; undefined without one, or when the step set a shell. */
export function shebangLine(task: Pick<StepTask, 'script' | 'shell'>): string | undefined {
  if (task.script === undefined || !task.script.startsWith('#!') || task.shell !== undefined) return undefined;
  const lineEnd = task.script.indexOf('\n');
  return task.script.slice(2, lineEnd < 0 ? undefined : lineEnd).trim();
}
