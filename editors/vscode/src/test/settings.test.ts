import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { readSettings, RESTART_KEYS } from '../settings';

const from = (o: Record<string, unknown>) => (k: string) => o[k];

test('empty strings are left out so project files and server defaults apply', () => {
  const s = readSettings(from({ device: '', toolchain: '  ', 'llm.url': '', 'harness.python': '' }));
  assert.deepEqual(s, {
    lint: { run: 'onType' },
    diagnostics: { workspace: false },
    llm: {},
    harness: {},
    trace: { server: 'off' },
  });
});

test('every setting reaches the server in the nested shape', () => {
  const s = readSettings(
    from({
      device: 'max-1550',
      toolchain: 'xpu-3.6',
      'lint.run': 'onSave',
      'diagnostics.workspace': true,
      'llm.url': 'http://127.0.0.1:8000/v1',
      'llm.model': 'qwen',
      'llm.apiKeyEnv': 'MY_KEY',
      'harness.python': '/venv/bin/python',
      'harness.url': 'http://gpu:9000',
      'trace.server': 'verbose',
    }),
  );
  assert.deepEqual(s, {
    device: 'max-1550',
    toolchain: 'xpu-3.6',
    lint: { run: 'onSave' },
    diagnostics: { workspace: true },
    llm: { url: 'http://127.0.0.1:8000/v1', model: 'qwen', apiKeyEnv: 'MY_KEY' },
    harness: { python: '/venv/bin/python', url: 'http://gpu:9000' },
    trace: { server: 'verbose' },
  });
});

test('an invalid lint.run or trace value falls back to the default', () => {
  const s = readSettings(from({ 'lint.run': 'sometimes', 'trace.server': 42 }));
  assert.equal(s.lint.run, 'onType');
  assert.equal(s.trace.server, 'off');
});

test('workspace diagnostics are on only for a real true, and restart the server', () => {
  assert.equal(readSettings(from({ 'diagnostics.workspace': 'yes' })).diagnostics.workspace, false);
  assert.equal(readSettings(from({ 'diagnostics.workspace': true })).diagnostics.workspace, true);
  assert.ok((RESTART_KEYS as readonly string[]).includes('xeforge.diagnostics.workspace'));
});
