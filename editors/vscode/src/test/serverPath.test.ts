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
    assert.match(e.message, /cargo install --path \./);
    assert.match(e.message, /xeforge\.server\.path/);
    assert.deepEqual(e.tried, ['/ext/bin/linux-x64/xeforge', 'xeforge on PATH']);
  }
});
