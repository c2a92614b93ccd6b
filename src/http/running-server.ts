// What a carrier hands back once it listens: shared by server.ts and the carriers it starts.
export type Carrier = 'uws' | 'node';

export interface RunningServer {
  carrier: Carrier;
  /** https when it serves TLS. */
  scheme: 'http' | 'https';
  port: number;
  close(): Promise<void>;
}
