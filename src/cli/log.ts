import { pino, type Logger } from 'pino';
import { escapeControl } from '../inputs/problems.ts';

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const OMITTED = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg']);

/**
 * The log of every long-running command (controller and its webhooks, user-pods-api, bastion-keys,
 * ssh-tracker, imagelist): pino records on stderr, as JSON lines (one object a line, for a log
 * collector), or, when stderr is a terminal, one readable line per record:
 * `2026-01-02T10:00:00.000Z INFO  crownlabs-controller: controller started metrics=":8080"`.
 */
export function commandLogger(command: string, stream: { write(s: string): unknown; isTTY?: boolean } = process.stderr): Logger {
  const name = `crownlabs-${command}`;
  if (!stream.isTTY) return pino({ name }, stream === process.stderr ? pino.destination({ dest: 2, sync: true }) : (stream as NodeJS.WritableStream));
  return pino({ name }, { write: (line: string) => void stream.write(`${prettyLine(line)}\n`) });
}

/** One pino JSON record as a line for a person; what it echoes (names from tenants' objects) is escaped. */
export function prettyLine(json: string): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return escapeControl(json.trimEnd());
  }
  const fields = Object.entries(rec)
    .filter(([k]) => !OMITTED.has(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' && /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v)}`);
  const time = typeof rec.time === 'number' ? new Date(rec.time).toISOString() : '';
  const level = (LEVELS[rec.level as number] ?? String(rec.level)).padEnd(5);
  return escapeControl(`${time} ${level} ${String(rec.name ?? '')}: ${String(rec.msg ?? '')}${fields.length ? ` ${fields.join(' ')}` : ''}`);
}

/** The `(line) => void` log of the bastion and image-list loops, as records of the command's logger. */
export function lineLog(logger: Logger): (line: string) => void {
  return (line) => logger.info(line);
}
