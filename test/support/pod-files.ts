import type { PodFileReader } from '../../src/user-pods/pod-files.ts';

/**
 * The pods' files for tests (no kubelet, so no exec): `set(pod, path, content)`. It hands back the
 * whole file, ignoring the limit, so what a test sees capped is the service's own cap.
 */
export class FakePodFiles implements PodFileReader {
  private readonly files = new Map<string, string>();
  readonly reads: { namespace: string; pod: string; container: string; path: string; limit: number }[] = [];

  set(pod: string, path: string, content: string): void {
    this.files.set(`${pod}:${path}`, content);
  }

  async read(namespace: string, pod: string, container: string, path: string, limit: number): Promise<Buffer> {
    this.reads.push({ namespace, pod, container, path, limit });
    const content = this.files.get(`${pod}:${path}`);
    if (content === undefined) throw new Error(`cat: ${path}: No such file or directory`);
    return Buffer.from(content, 'utf8');
  }
}
