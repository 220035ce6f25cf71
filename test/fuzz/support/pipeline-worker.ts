// The case worker: a child process the document fuzzers send cases to, one at a time. The test
// process kills and restarts it when a case hangs or exhausts its memory, so one bad case cannot
// hang or crash the suite, and is reported with its input.
import { join } from 'node:path';
import type { DocCase } from './doc-case.ts';
import { runDocCase, runWatchCase, type CaseResult } from './pipeline.ts';

export interface CaseRequest {
  id: number;
  kind: 'doc' | 'watch';
  case: DocCase;
}

const dir = process.argv[2];
if (!dir || !process.send) throw new Error('pipeline-worker: run by PipelineWorker (fork with IPC and a scratch folder)');

process.on('message', (msg: CaseRequest) => {
  void (msg.kind === 'watch' ? runWatchCase(msg.case, join(dir, 'watch')) : runDocCase(msg.case, join(dir, 'case'))).then((result: CaseResult) => process.send!({ id: msg.id, result }));
});
process.on('disconnect', () => process.exit(0));
// The unedited base compiles the schema validators (seconds): not part of any case's time limit.
void runDocCase({ base: 'example', config: 0, style: 'yaml', objectOps: [], textOps: [] }, join(dir, 'case')).then((warm) => process.send!({ ready: true, warm }));
