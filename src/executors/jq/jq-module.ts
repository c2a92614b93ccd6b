// jq-wasm's Emscripten module (jq 1.7.1 compiled to WebAssembly), driven directly. jq-wasm's own
// `raw()` feeds stdin one byte per call while slicing off the rest of the input, and grows stdout one
// byte at a time: quadratic, 7 s for 280 KB. Here jq's reads of its input and writes to stdout and
// stderr are answered from and into whole buffers, and jq's exit status comes back with its output.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

export interface JqExit {
  status: number;
  stdout: string;
  stderr: string;
}

export interface JqModule {
  /** Runs jq with `args`, then `/dev/stdin`, which reads `input`. */
  run(args: readonly string[], input: Uint8Array): JqExit;
  /** The bytes of WebAssembly memory the module holds: it grows with the largest input, never shrinks. */
  memoryBytes(): number;
  /** The most it may grow to, as jq-wasm was built: past it, jq aborts. */
  readonly maxMemoryBytes: number;
}

type Imports = Record<string, (...args: number[]) => number>;
// The project's TypeScript libraries (ES and Node) do not declare WebAssembly; this is the part used here.
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
interface WasmInstance {
  readonly exports: Record<string, unknown>;
}
declare const WebAssembly: { instantiate(binary: Uint8Array, imports: object): Promise<{ instance: WasmInstance }> };
interface EmscriptenModule {
  callMain(args: string[]): number;
}

const require = createRequire(import.meta.url);
const gluePath = require.resolve('jq-wasm/dist/build/jq.js');
const createModule = require(gluePath) as (settings: object) => Promise<EmscriptenModule>;

/** The wasm binary the glue embeds, the export behind its stack allocator (see restoreStack), the memory's limit. */
function readBuild(): { binary: Uint8Array; stackAllocExport: string; maxMemoryBytes: number } {
  const glue = readFileSync(gluePath, 'utf8');
  const binary = /"data:application\/octet-stream;base64,([A-Za-z0-9+/=]+)"/.exec(glue)?.[1];
  const stackAllocExport = /__emscripten_stack_alloc = wasmExports\["(\w+)"\]/.exec(glue)?.[1];
  if (binary === undefined || stackAllocExport === undefined) throw new Error(`jq: ${gluePath} is not the jq-wasm build this executor drives`);
  const maxMemoryBytes = Number(/getHeapMax = \(\) => (\d+)/.exec(glue)?.[1] ?? Infinity);
  return { binary: Buffer.from(binary, 'base64'), stackAllocExport, maxMemoryBytes };
}

const STDIN_PATH = Buffer.from('/dev/stdin\0');
const KEPT_SINK_BYTES = 16 * 1024 * 1024;

/**
 * A growable byte buffer: jq's output arrives a line at a time (Emscripten's stdout flushes at every
 * newline). Kept from one run to the next unless it grew past `KEPT_SINK_BYTES`.
 */
class Sink {
  private bytes = new Uint8Array(64 * 1024);
  private length = 0;

  reset(): void {
    if (this.bytes.length > KEPT_SINK_BYTES) this.bytes = new Uint8Array(64 * 1024);
    this.length = 0;
  }

  append(heap: Uint8Array, from: number, count: number): void {
    if (this.length + count > this.bytes.length) {
      const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + count));
      grown.set(this.bytes.subarray(0, this.length));
      this.bytes = grown;
    }
    if (count < 32) for (let i = 0; i < count; i++) this.bytes[this.length + i] = heap[from + i];
    else this.bytes.set(heap.subarray(from, from + count), this.length);
    this.length += count;
  }

  text(): string {
    return Buffer.from(this.bytes.buffer, 0, this.length).toString('utf8');
  }
}

export async function loadJq(): Promise<JqModule> {
  const { binary, stackAllocExport, maxMemoryBytes } = readBuild();
  let memory: WasmMemory | undefined;
  let heap = new Uint8Array(0);
  let words = new Uint32Array(0);
  let stackAlloc: (bytes: number) => number = () => 0;
  // The run in progress.
  let input: Uint8Array = new Uint8Array(0);
  let read = 0;
  let stdinFd = -1;
  const stdout = new Sink();
  const stderr = new Sink();

  // A view of memory is detached (length 0) once the memory grows.
  const views = () => {
    if (heap.byteLength !== 0 || memory === undefined) return;
    heap = new Uint8Array(memory.buffer);
    words = new Uint32Array(memory.buffer);
  };
  const isStdinPath = (address: number) => {
    for (let i = 0; i < STDIN_PATH.length; i++) if (heap[address + i] !== STDIN_PATH[i]) return false;
    return true;
  };

  // The glue's system calls, found by their functions' names (the import keys are minified). jq opens
  // `/dev/stdin` as a file: its reads on that descriptor take the input from `input`.
  const wrapImports = (imports: Imports) => {
    const key = (name: string) => {
      const found = Object.keys(imports).find((k) => imports[k]!.name === name);
      if (found === undefined) throw new Error(`jq: the jq-wasm build has no ${name}`);
      return found;
    };
    const [openat, fdRead, fdWrite] = ['___syscall_openat', '_fd_read', '_fd_write'].map(key) as [string, string, string];
    const open = imports[openat]!;
    const readFd = imports[fdRead]!;
    const writeFd = imports[fdWrite]!;
    imports[openat] = (dirFd, path, flags, varargs) => {
      const fd = open(dirFd, path, flags, varargs);
      views();
      if (fd >= 0 && isStdinPath(path)) stdinFd = fd;
      return fd;
    };
    // fd_read(fd, iovs, iovCount, readOut) and fd_write alike: iovs are (address, length) pairs.
    imports[fdRead] = (fd, iovs, iovCount, readOut) => {
      if (fd !== stdinFd) return readFd(fd, iovs, iovCount, readOut);
      views();
      let total = 0;
      for (let i = 0; i < iovCount; i++) {
        const address = words[(iovs >> 2) + 2 * i]!;
        const wanted = words[(iovs >> 2) + 2 * i + 1]!;
        const count = Math.min(wanted, input.length - read);
        heap.set(input.subarray(read, read + count), address);
        read += count;
        total += count;
        if (count < wanted) break;
      }
      words[readOut >> 2] = total;
      return 0;
    };
    imports[fdWrite] = (fd, iovs, iovCount, writtenOut) => {
      if (fd !== 1 && fd !== 2) return writeFd(fd, iovs, iovCount, writtenOut);
      if (heap.byteLength === 0) views();
      const sink = fd === 1 ? stdout : stderr;
      let total = 0;
      for (let at = iovs >> 2, end = at + 2 * iovCount; at < end; at += 2) {
        const count = words[at + 1]!;
        if (count === 0) continue;
        sink.append(heap, words[at]!, count);
        total += count;
      }
      words[writtenOut >> 2] = total;
      return 0;
    };
  };

  // The glue hands its imports to instantiateWasm and waits for receiveInstance; a failure would
  // leave it waiting, so it ends the load here.
  let failed: (error: unknown) => void = () => {};
  const instantiation = new Promise<never>((_, reject) => { failed = reject; });
  const module = await Promise.race([instantiation, createModule({
    instantiateWasm(info: { a: Imports }, receiveInstance: (instance: WasmInstance) => void) {
      wrapImports(info.a);
      WebAssembly.instantiate(binary, info).then(({ instance }) => {
        memory = Object.values(instance.exports).find((value): value is WasmMemory => typeof value === 'object' && value !== null && 'buffer' in value);
        stackAlloc = instance.exports[stackAllocExport] as (bytes: number) => number;
        receiveInstance(instance);
      }).catch(failed);
      return {};
    },
  })]);

  return {
    run(args, bytes) {
      input = bytes;
      read = 0;
      stdinFd = -1;
      stdout.reset();
      stderr.reset();
      const top = stackAlloc(0);
      // The glue's exit() also sets the process's (or this thread's) exit code to jq's status.
      const exitCode = process.exitCode;
      try {
        const status = module.callMain([...args, '/dev/stdin']);
        return { status, stdout: stdout.text(), stderr: stderr.text() };
      } finally {
        process.exitCode = exitCode;
        restoreStack(stackAlloc, top);
        input = new Uint8Array(0);
      }
    },
    memoryBytes: () => memory?.buffer.byteLength ?? 0,
    maxMemoryBytes,
  };
}

/**
 * jq ends with exit(), which leaves by throwing through WebAssembly: main's frame, and the arguments
 * callMain put on the stack, stay there (3 KB a run). Left alone, the stack runs into the module's
 * data after about 300 runs and jq fails an assertion from then on. The allocator subtracts and
 * aligns: a negative size hands the space back.
 */
function restoreStack(stackAlloc: (bytes: number) => number, top: number): void {
  const now = stackAlloc(0);
  if (now !== top) stackAlloc(now - top);
}
