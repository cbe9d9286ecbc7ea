import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { devicePickItems, parseDevices } from '../devices';

/** What the server sends (`DevicesResult` in server/src/lsp/handlers/configuration.rs). */
const reply = {
  devices: [
    { id: 'arc-pro-b70', name: 'Intel Arc Pro B70', vendor: 'intel', arch: 'bmg', generation: 'Xe2-HPG', selected: false },
    { id: 'max-1550', name: 'Intel Data Center GPU Max 1550', vendor: 'intel', arch: 'pvc', generation: 'Xe-HPC', selected: true },
  ],
  toolchains: ['xpu-3.6', 'xpu-3.7'],
  device: 'max-1550',
  toolchain: 'xpu-3.7',
};

test("the server's reply: the selected device is listed first and marked", () => {
  const list = parseDevices(reply);
  assert.equal(list.device, 'max-1550');
  assert.equal(list.toolchain, 'xpu-3.7');
  const items = devicePickItems(list);
  assert.deepEqual(items.map((i) => i.id), ['max-1550', 'arc-pro-b70']);
  assert.match(items[0].label, /check/);
  assert.equal(items[0].description, 'Intel Data Center GPU Max 1550 — current');
  assert.equal(items[1].detail, 'intel · bmg · Xe2-HPG');
});

test('a reply of another shape is an error naming what is wrong, not a guessed list', () => {
  assert.throws(() => parseDevices(undefined), /the reply is not an object/);
  assert.throws(() => parseDevices(['arc-pro-b70']), /the reply is not an object/);
  assert.throws(() => parseDevices({ ...reply, devices: ['arc-pro-b70'] }), /devices\[0\] is not an object/);
  assert.throws(() => parseDevices({ ...reply, current: 'x', device: undefined }), /the reply\.device is not a string/);
  const { selected: _, ...unflagged } = reply.devices[0];
  assert.throws(() => parseDevices({ ...reply, devices: [unflagged] }), /devices\[0\]\.selected is not a boolean/);
});
