// Type declarations of cordon-client (src/index.js).
import type { Socket } from 'node:net';

export type Duration = number | string; // seconds, or a DUR such as "500ms", "2m"
export type Policy = Record<string, unknown>;
export type Report = Record<string, any>;

export declare class CordonError extends Error {
  /** the HTTP status of a server's refusal; null otherwise */
  status: number | null;
  constructor(message: string, status?: number | null);
}
export declare class ServerUnreachable extends CordonError {}

export interface Event {
  /** "started", "stdout", "stderr", "result", or one this version does not know */
  type: string;
  /** the decoded bytes of an output event */
  data: Buffer;
  raw: Record<string, any>;
}

export interface ExecResult {
  execId: string | null;
  status: string | null;
  exitCode: number | null;
  signal: string | null;
  denials: Record<string, any>[];
  usage: Record<string, any>;
  stdout: Buffer;
  stderr: Buffer;
  raw: Record<string, any>;
  readonly ok: boolean;
  /** stdout as UTF-8 text */
  readonly text: string;
}

export interface ExecOptions {
  env?: Record<string, string>;
  /** absolute, or relative to the session's cwd */
  cwd?: string;
  stdin?: string | Uint8Array;
  timeout?: Duration;
}

export interface FileEntry {
  name: string;
  type: string;
  size: number | null;
  mode: number | null;
  /** the name's bytes (pass as the path for a name that is not UTF-8) */
  raw: Buffer;
}

export declare class Files {
  read(path: string): Promise<Buffer>;
  write(path: string, data: string | Uint8Array, opts?: { parents?: boolean }): Promise<void>;
  delete(path: string): Promise<void>;
  list(path?: string): Promise<FileEntry[]>;
}

export declare class PtyConnection implements AsyncIterable<Buffer> {
  /** the upgraded connection: the terminal's bytes both ways */
  readonly socket: Socket;
  readonly execId: string | null;
  write(data: string | Uint8Array): Promise<void>;
  /** no more input (the pty's end of file) */
  end(): void;
  [Symbol.asyncIterator](): AsyncIterator<Buffer>;
  resize(rows: number, cols: number): Promise<void>;
  result(): Promise<Record<string, any>>;
  close(): void;
}

export declare class ExecHandle {
  readonly id: string;
  info(): Promise<Record<string, any>>;
  running(): Promise<boolean>;
  result(): Promise<ExecResult | null>;
  stream(opts?: { follow?: boolean }): AsyncGenerator<Event>;
  output(): Promise<{ stdout: Buffer; stderr: Buffer }>;
  wait(): Promise<ExecResult>;
  signal(sig?: string): Promise<void>;
  kill(): Promise<void>;
}

export interface Changes {
  session: string;
  changes: { path: string; change: 'created' | 'modified' | 'deleted'; type: 'file' | 'other'; bytes: number; sha256: string | null }[];
  truncated: boolean;
  diff: string;
  diff_bytes: number;
  diff_truncated: boolean;
  [key: string]: any;
}

export interface PauseState {
  id: string;
  state: 'paused' | 'running';
  frozen: boolean;
  paused_seconds: number;
}

export interface Snapshot {
  snapshot: string;
  bytes: number;
  files: number;
  entries: number;
  created: string;
}

export declare class Session {
  readonly id: string;
  readonly warm: boolean;
  readonly workspace: string | null;
  readonly cwd: string | null;
  readonly files: Files;
  /** the session's report once closed */
  report: Report | null;
  info(): Promise<Record<string, any>>;
  /** the change set as it is now (overlay or review mode): changes, diff, diff_truncated...;
   * with a snapshot's id, that snapshot's against the session's lower tree (docs/api.md: snapshots) */
  changes(snapshot?: string): Promise<Changes>;
  /** every process of the session frozen, its clocks stopped (docs/api.md: pause and resume) */
  pause(): Promise<PauseState>;
  /** thawed, its clocks going on from their time left */
  resume(): Promise<PauseState>;
  /** a snapshot of the workspace's changes, the session frozen for the copy (docs/api.md: snapshots) */
  snapshot(): Promise<Snapshot>;
  snapshots(): Promise<{ snapshots: Snapshot[]; bytes: number; budget: number }>;
  deleteSnapshot(snapshot: string): Promise<{ deleted: string }>;
  /** the snapshot's changes kept as a sealed change set beside the session's, for
   * `cordon apply DIR` (docs/api.md: snapshots) */
  snapshotChangeset(snapshot: string): Promise<{ dir: string; snapshot: string; hosts: string[]; bytes: number; files: number; entries: number }>;
  /** the workspace back to snapshot; running execs ended first (their status "restored") */
  restore(snapshot: string): Promise<{ restored: string }>;
  /** a new session of the same request, its workspace at snapshot (or now) */
  fork(snapshot?: string | null): Promise<Session>;
  execStream(argv: string[], opts?: ExecOptions): AsyncGenerator<Event>;
  exec(argv: string[], opts?: ExecOptions & { background?: false }): Promise<ExecResult>;
  exec(argv: string[], opts: ExecOptions & { background: true }): Promise<ExecHandle>;
  signal(execId: string, sig?: string): Promise<void>;
  execInfo(execId: string): Promise<Record<string, any>>;
  pty(argv: string[], opts?: Omit<ExecOptions, 'stdin'> & { rows?: number; cols?: number }): Promise<PtyConnection>;
  close(): Promise<Report>;
}

export interface Retry {
  deadline: number;
  initial: number;
  maximum: number;
}
export declare const defaultRetry: Readonly<Retry>;

export interface ClientOptions {
  socketPath?: string;
  /** http://HOST:PORT of a server on --listen */
  url?: string;
  /** the bearer token of --token-file */
  token?: string;
  /** seconds without a byte from the server */
  timeout?: number;
  /** 429 and 503 retried; null: not */
  retry?: Retry | null;
}

export interface SessionOptions {
  policy?: Policy;
  idleTimeout?: Duration;
  timeout?: Duration;
}

export type RunReport = Report & { stdoutData: Buffer; stderrData: Buffer };

export declare class Client {
  constructor(opts: ClientOptions);
  readonly socketPath: string | null;
  readonly url: string | null;
  session(opts?: SessionOptions): Promise<Session>;
  withSession<T>(opts: SessionOptions | undefined, fn: (s: Session) => Promise<T>): Promise<T>;
  sessions(): Promise<Record<string, any>[]>;
  sessionReport(id: string): Promise<Report>;
  pool(): Promise<Record<string, any>>;
  version(): Promise<{ version: string; api: number }>;
  health(): Promise<boolean>;
  metrics(): Promise<string>;
  run(argv: string[], opts?: { policy?: Policy; stdin?: string | Uint8Array; timeout?: Duration }): Promise<RunReport>;
  getRun(id: string): Promise<RunReport>;
}

export declare function ndjson(chunks: AsyncIterable<Buffer>): AsyncGenerator<Event>;
export default Client;
