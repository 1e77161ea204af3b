import { chmod, chown, mkdir, mkdtemp, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileTools } from '../../../src/tools/builtin/file-tools.js';
import { Workspace } from '../../../src/tools/workspace.js';
import { directContext, outcome, runCommandCall } from '../../support/run-command-call.js';

/**
 * A worker running as root runs each command as the owner of its workspace, not as root: host files
 * are seen as another user's, and what the command and the file tools write stays the owner's.
 */
const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;
let base: string;
let root: string;

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'keel-user-')));
  await chmod(base, 0o755);
  root = path.join(base, 'ws');
  await mkdir(root);
  await writeFile(path.join(base, 'root-only.txt'), 'root secret', { mode: 0o600 });
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

const sh = async (workspace: Workspace, script: string): Promise<string> => {
  const result = outcome(
    await runCommandCall(
      workspace,
      { program: 'sh', args: ['-c', script] },
      { allow: ['sh'], readOnlyPaths: [base] },
    ),
  );
  expect(result.ok, result.text).toBe(true);
  return result.text;
};

describe.runIf(asRoot)('run_command under a root worker', () => {
  it('runs as the workspace owner: root-only files are unreadable, and no capability is left', async () => {
    await chown(root, NOBODY, NOBODY);
    const workspace = await Workspace.open(root);
    const text = await sh(
      workspace,
      `id -u; cat ${path.join(base, 'root-only.txt')}; grep CapEff /proc/self/status; echo made > made.txt`,
    );
    expect(text).toMatch(/^stdout:\n65534\n/mu);
    expect(text).toContain('Permission denied');
    expect(text).not.toContain('root secret');
    expect(text).toContain('CapEff:\t0000000000000000');
    expect((await stat(path.join(root, 'made.txt'))).uid).toBe(NOBODY);
  });

  it('gives what the file tools write to the owner, so a command can change it', async () => {
    await chown(root, NOBODY, NOBODY);
    const tools = fileTools({ root });
    const write = tools.find((tool) => tool.name === 'write_file')!;
    await write.execute(
      { path: 'src/notes.txt', content: 'from the model\n', createDirectories: true },
      directContext(new AbortController().signal),
    );
    for (const made of ['src', 'src/notes.txt'])
      expect((await stat(path.join(root, made))).uid, made).toBe(NOBODY);
    const text = await sh(
      await Workspace.open(root),
      'echo appended >> src/notes.txt && touch src/new && cat src/notes.txt',
    );
    expect(text).toContain('from the model\nappended');
  });

  it('stays the worker’s user, without capabilities, in a workspace root owns', async () => {
    const workspace = await Workspace.open(root);
    const text = await sh(workspace, 'id -u; grep CapEff /proc/self/status');
    expect(text).toMatch(/^stdout:\n0\n/mu);
    expect(text).toContain('CapEff:\t0000000000000000');
  });
});
