import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { LookupEnv, resolveServer, ServerNotFound } from '../serverPath';

function env(files: string[], over: Partial<LookupEnv> = {}): LookupEnv {
  const set = new Set(files);
  return {
    configuredPath: '',
    extensionPath: '/ext',
    workspaceFolder: '/ws',
    homeDir: '/home/u',
    platform: 'linux',
    arch: 'x64',
    pathVar: '/usr/local/bin:/usr/bin',
    interpreters: [],
    isExecutable: (p) => set.has(p),
    ...over,
  };
}

test('the setting wins over the bundled binary and PATH', () => {
  const r = resolveServer(env(['/opt/xf', '/ext/bin/linux-x64/xeforge', '/usr/bin/xeforge'], { configuredPath: '/opt/xf' }));
  assert.deepEqual(r, { command: '/opt/xf', source: 'setting' });
});

test('a wrong setting is an error naming the path, not a silent fallback', () => {
  assert.throws(
    () => resolveServer(env(['/usr/bin/xeforge'], { configuredPath: '~/bin/xf' })),
    (e: unknown) => e instanceof ServerNotFound && e.message.includes('/home/u/bin/xf'),
  );
});

test('~, ${workspaceFolder} and relative settings are expanded', () => {
  assert.equal(resolveServer(env(['/home/u/x'], { configuredPath: '~/x' })).command, '/home/u/x');
  assert.equal(resolveServer(env(['/ws/target/debug/xeforge'], { configuredPath: '${workspaceFolder}/target/debug/xeforge' })).command, '/ws/target/debug/xeforge');
  assert.equal(resolveServer(env(['/ws/t/xeforge'], { configuredPath: 't/xeforge' })).command, '/ws/t/xeforge');
});

test('${workspaceFolder} without a folder is reported', () => {
  assert.throws(() => resolveServer(env([], { configuredPath: '${workspaceFolder}/x', workspaceFolder: undefined })), ServerNotFound);
});

test('the bundled binary comes before PATH', () => {
  const r = resolveServer(env(['/ext/bin/linux-x64/xeforge', '/usr/bin/xeforge']));
  assert.deepEqual(r, { command: '/ext/bin/linux-x64/xeforge', source: 'bundled' });
});

test('PATH is searched in order', () => {
  const r = resolveServer(env(['/usr/bin/xeforge', '/usr/local/bin/xeforge']));
  assert.deepEqual(r, { command: '/usr/local/bin/xeforge', source: 'path' });
});

test('windows looks for xeforge.exe with ; separators', () => {
  const r = resolveServer(env(['C:\\tools/xeforge.exe'], { platform: 'win32', pathVar: 'C:\\nothing;C:\\tools' }));
  assert.equal(r.source, 'path');
});

test('nothing found: the error says how to install and lists what was tried', () => {
  try {
    resolveServer(env([]));
    assert.fail('expected ServerNotFound');
  } catch (e) {
    assert.ok(e instanceof ServerNotFound);
    assert.match(e.message, /pip install xeforge/);
    assert.match(e.message, /xeforge\.server\.path/);
    assert.deepEqual(e.tried, ['/ext/bin/linux-x64/xeforge', 'xeforge on PATH']);
  }
});

test("the project environment's xeforge comes before the bundled binary and PATH", () => {
  const files = ['/ws/.venv/bin/xeforge', '/ext/bin/linux-x64/xeforge', '/usr/bin/xeforge'];
  const r = resolveServer(env(files, { interpreters: ['/ws/.venv/bin/python'] }));
  assert.deepEqual(r, { command: '/ws/.venv/bin/xeforge', source: 'environment' });
});

test('the selected interpreter is tried first, and an environment without xeforge is passed over', () => {
  const files = ['/opt/env2/bin/xeforge', '/ws/.venv/bin/xeforge'];
  assert.equal(resolveServer(env(files, { interpreters: ['/opt/env2/bin/python3', '/ws/.venv/bin/python'] })).command, '/opt/env2/bin/xeforge');
  assert.deepEqual(resolveServer(env(['/ext/bin/linux-x64/xeforge'], { interpreters: ['/ws/.venv/bin/python'] })), {
    command: '/ext/bin/linux-x64/xeforge',
    source: 'bundled',
  });
});

test('the setting still wins over the project environment', () => {
  const r = resolveServer(env(['/opt/xf', '/ws/.venv/bin/xeforge'], { configuredPath: '/opt/xf', interpreters: ['/ws/.venv/bin/python'] }));
  assert.equal(r.source, 'setting');
});

test('not found names every place tried and how to install', () => {
  assert.throws(
    () => resolveServer(env([], { interpreters: ['/ws/.venv/bin/python'] })),
    (e: unknown) =>
      e instanceof ServerNotFound &&
      e.message.includes('pip install xeforge') &&
      e.tried.includes('/ws/.venv/bin/xeforge') &&
      e.tried.includes('/ext/bin/linux-x64/xeforge'),
  );
});
