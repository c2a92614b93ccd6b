// What an executor supplies to the contract suite (test/executor-contract.test.ts): the real server
// it talks to, and steps that print, fail, print a lot and wait, written in its own terms.

export interface ContractCase {
  name: string;
  /**
   * Starts the real server the executor talks to. `root` is YAML text of root fields every DAG of
   * the suite gets (smtp:, ssh:, container: ...), each line at column 0.
   */
  start(): Promise<{ root: string; stop(): Promise<void> }>;
  /** Step bodies: YAML lines of one step map (executor, command, config...), without name, each at column 4. */
  steps: {
    /** Writes `text` to the step's stdout log and exits 0. `text` may contain `${TOKEN}`, a secret. */
    prints(text: string): string;
    /** Fails; `text` appears in the stderr log or the node's error. `exitCode`: as the node records it. */
    fails(text: string): { step: string; exitCode: number };
    /** Writes at least `bytes` bytes to stdout, and exits 0 otherwise. */
    printsBytes(bytes: number): string;
    /** Keeps running until stopped (at least 60 s). */
    waits(): string;
  };
}

/** `lines` as a step body: each at column 4. */
export function stepLines(...lines: string[]): string {
  return lines.map((line) => `    ${line}`).join('\n');
}
