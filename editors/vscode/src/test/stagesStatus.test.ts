import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { stagePicks } from '../stages';
import { applyServerStatus, statusView } from '../statusModel';

test('stage picks keep only runStage lenses, the kernel above the cursor first', () => {
  const picks = stagePicks(
    [
      { line: 2, title: '$(zap) device-tuning', command: 'xeforge.runStage', arguments: [{ kernel: 'a', stage: 'device-tuning' }] },
      { line: 2, title: 'arc-pro-b70: 1 error', command: 'xeforge.showKernel' },
      { line: 30, title: 'autotune', command: 'xeforge.runStage', arguments: [{ kernel: 'b', stage: 'autotune' }] },
      { line: 60, title: 'autotune', command: 'xeforge.runStage', arguments: [{ kernel: 'c', stage: 'autotune' }] },
    ],
    40,
  );
  assert.deepEqual(picks.map((p) => p.description), ['b · line 31', 'a · line 3', 'c · line 61']);
  assert.equal(picks[1].label, 'device-tuning');
  assert.deepEqual(picks[0].arguments, [{ kernel: 'b', stage: 'autotune' }]);
});

test('the status item shows device, toolchain and harness; a bad harness is a warning', () => {
  let s = { phase: 'running' as const, device: 'arc-pro-b70', toolchain: 'xpu-3.7', harnessSetting: { url: 'http://gpu:9000' } };
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
