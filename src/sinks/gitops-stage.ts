import type { StagedFile, TreeStage } from './atomic-tree.ts';
import { instanceApplications, singleSetApplication, type GitopsSet } from './gitops.ts';

/** A set's file as the gitops command holds it: its text, until it is staged. */
export interface StageableFile {
  text?: string;
  /** Where it was staged, and what the tree holds for it there instead of its text. */
  staged?: { rel: string; file: StagedFile };
}

/**
 * Hands each set's rendered files to a TreeStage (src/sinks/atomic-tree.ts) under the path the
 * gitops tree gives them, as soon as that path is known: at once for a Workspace's or a Tenant's
 * set, and for Instances once a namespace's last set came (its sets are cut into Applications by
 * their object counts: instanceApplications). Sets must come in compareUnits order, which keeps a
 * namespace's Instance sets together. A staged file's text is dropped; files without text (taken
 * from the render cache) are not staged, but count for the chunks.
 */
export class GitopsStager {
  private namespace?: string;
  private pending: [GitopsSet, readonly [string, StageableFile][]][] = [];

  constructor(
    private readonly stage: TreeStage,
    private readonly maxObjects: number,
  ) {}

  push(set: GitopsSet, files: readonly [string, StageableFile][]): void {
    const p = set.unit.parent;
    if (p.kind !== 'Instance' || (p.namespace ?? '') !== this.namespace) this.flush();
    if (p.kind === 'Instance') {
      this.namespace = p.namespace ?? '';
      this.pending.push([set, files]);
      return;
    }
    const app = singleSetApplication(set);
    if (app) this.add(app.folder, files);
  }

  /** Stages the namespace in progress (call once after the last set). */
  flush(): void {
    if (this.pending.length === 0) return;
    const filesOf = new Map(this.pending.map(([set, files]) => [set, files]));
    for (const app of instanceApplications(this.namespace!, [...filesOf.keys()], this.maxObjects)) {
      for (const set of app.sets) this.add(app.folder, filesOf.get(set)!);
    }
    this.pending = [];
    this.namespace = undefined;
  }

  private add(folder: string, files: readonly [string, StageableFile][]): void {
    for (const [name, file] of files) {
      if (file.text === undefined) continue;
      const rel = `${folder}/${name}`;
      file.staged = { rel, file: this.stage.add(rel, file.text) };
      file.text = undefined;
    }
  }
}
