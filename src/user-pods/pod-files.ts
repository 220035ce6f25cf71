/**
 * Reading a file out of a running pod (the seed copies tokens with `cat /tmp/<key>` through
 * exec). An interface, so that the service runs against a real cluster's exec and tests (no
 * kubelet, so no exec) against a double.
 */
import { Writable } from 'node:stream';
import { Exec, type KubeConfig } from '@kubernetes/client-node';

export interface PodFileReader {
  /** At most `limit` bytes of `path` in `container` of the pod; rejects when the file cannot be read. */
  read(namespace: string, pod: string, container: string, path: string, limit: number): Promise<Buffer>;
}

/** `cat <path>` through the API server's exec (pods/exec), stopping once `limit` bytes arrived. */
export class ExecPodFileReader implements PodFileReader {
  private readonly exec: Exec;
  constructor(kubeConfig: KubeConfig, private readonly timeoutMs = 10_000) {
    this.exec = new Exec(kubeConfig);
  }

  async read(namespace: string, pod: string, container: string, path: string, limit: number): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = '';
    let socket: { close(): void } | undefined;
    let full = false;
    const stdout = new Writable({
      write(chunk: Buffer, _enc, done) {
        if (size < limit) chunks.push(chunk.subarray(0, limit - size));
        size += chunk.length;
        if (size >= limit && !full) {
          full = true; // enough: a file that keeps growing must not keep us reading
          socket?.close();
        }
        done();
      },
    });
    const errs = new Writable({
      write(chunk: Buffer, _enc, done) {
        if (stderr.length < 1024) stderr += chunk.toString('utf8');
        done();
      },
    });
    return new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => {
        socket?.close();
        reject(new Error(`exec in ${namespace}/${pod}: timed out after ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      const finish = (err?: Error) => {
        clearTimeout(timer);
        if (err && !full) reject(err);
        else resolve(Buffer.concat(chunks).subarray(0, limit));
      };
      this.exec
        .exec(namespace, pod, container, ['cat', path], stdout, errs, null, false, (status) => {
          if (status.status === 'Success') finish();
          else finish(new Error(`cat ${path} in ${namespace}/${pod}: ${status.message ?? status.reason ?? 'failed'}${stderr ? `: ${stderr.trim()}` : ''}`));
        })
        .then((ws) => {
          socket = ws;
          if (full) ws.close();
          ws.on('close', () => finish());
          ws.on('error', (e: Error) => finish(e));
        })
        .catch((e: Error) => finish(e));
    });
  }
}
