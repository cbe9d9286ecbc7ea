import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { stagePicks } from '../stages';
import { applyServerStatus, statusView } from '../statusModel';

test('stage picks come from xeforge/stages: the kernel above the cursor first, recommended stages first', () => {
  const run = (kernel: string, stage: string) => ({ title: stage, command: 'xeforge.runStage', arguments: [{ kernel, stage }] });
  const picks = stagePicks(
    {
      kernels: [
        { name: 'a', line: 2, stages: [{ name: 'device-tuning', title: 'Device tuning', command: run('a', 'device-tuning') }] },
        {
          name: 'b',
          line: 30,
          stages: [
            { name: 'dtype', title: 'Dtype', command: run('b', 'dtype') },
            { name: 'autotune', title: 'Autotune', recommended: true, command: run('b', 'autotune') },
            { name: 'broken', title: 'No command' },
          ],
        },
        { name: 'c', line: 60, stages: [{ name: 'autotune', title: 'Autotune', command: run('c', 'autotune') }] },
      ],
    },
    40,
  );
  assert.deepEqual(picks.map((p) => p.description), ['b · line 31', 'b · line 31', 'a · line 3', 'c · line 61']);
  assert.equal(picks[0].label, 'Autotune (recommended)');
  assert.deepEqual(picks[0].arguments, [{ kernel: 'b', stage: 'autotune' }]);
  assert.equal(picks[1].label, 'Dtype');
  assert.deepEqual(stagePicks(null, 0), []);
});

test('the status item shows device, toolchain and harness; a bad harness is a warning', () => {
  const s = { phase: 'running' as const, device: 'arc-pro-b70', toolchain: 'xpu-3.7', harnessSetting: { url: 'http://gpu:9000' } };
  assert.deepEqual(statusView(s), {
    text: 'XeForge arc-pro-b70 · xpu-3.7',
    detail: 'harness: remote http://gpu:9000',
    severity: 'information',
    busy: false,
  });
  const next = applyServerStatus(s, { device: 'max-1550', harness: { state: 'unreachable', detail: 'connection refused' } });
  const v = statusView(next);
  assert.equal(v.text, 'XeForge max-1550 · xpu-3.7');
  assert.equal(v.detail, 'harness: unreachable (connection refused)');
  assert.equal(v.severity, 'warning');
  assert.equal(statusView({ phase: 'failed', error: 'not found' }).severity, 'error');
  assert.equal(applyServerStatus(s, 'junk'), s);
});

test('the status item names the server that runs, where it came from and its version', () => {
  const v = statusView({
    phase: 'running',
    device: 'arc-pro-b70',
    toolchain: 'xpu-3.7',
    server: { command: '/ext/bin/linux-x64/xeforge', source: 'bundled with the extension', version: '0.1.0' },
  });
  assert.match(v.detail, /server 0\.1\.0: bundled with the extension \(\/ext\/bin\/linux-x64\/xeforge\)/);
});
