// The http executor's contract case: a real HTTP server on a loopback port that answers with the
// text it is sent (`/echo`), fails with it as its reason phrase (`/fail`), sends many bytes
// (`/bytes`) or never answers (`/hang`, until the step is stopped or timed out).
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { stepLines, type ContractCase } from './contract-case.ts';

let origin = '';

/** An http step with the config lines given (each at the config's indentation). */
function httpStep(command: string, ...config: string[]): string {
  return stepLines('executor:', '  type: http', '  config:', '    silent: true', ...config.map((line) => `    ${line}`), `command: ${command}`);
}

export const httpCase: ContractCase = {
  name: 'http',
  start: async () => {
    const hanging = new Set<ServerResponse>();
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const text = url.searchParams.get('text') ?? '';
      if (url.pathname === '/echo') {
        res.end(text);
      } else if (url.pathname === '/fail') {
        res.writeHead(500, text);
        res.end('failed on purpose');
      } else if (url.pathname === '/bytes') {
        res.end('x'.repeat(Number(url.searchParams.get('n'))));
      } else {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return {
      root: '',
      stop: async () => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      },
    };
  },
  steps: {
    // The text goes as a query parameter (config strings expand ${TOKEN}) and comes back as the body.
    prints: (text) => httpStep(`GET ${origin}/echo`, 'query:', `  text: ${JSON.stringify(text)}`),
    // The server's reason phrase is part of the step's error: "http status code not 2xx: 500 <text>".
    fails: (text) => ({ step: httpStep(`GET ${origin}/fail`, 'query:', `  text: ${JSON.stringify(text)}`), exitCode: 1 }),
    printsBytes: (bytes) => httpStep(`GET ${origin}/bytes?n=${bytes}`),
    waits: () => httpStep(`GET ${origin}/hang`),
  },
};
