import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { devicePickItems, parseDevices } from '../devices';

test('objects with a current flag: the current device is listed first and marked', () => {
  const list = parseDevices([
    { id: 'arc-pro-b70', name: 'Intel Arc Pro B70', vendor: 'intel', architecture: 'xe2' },
    { id: 'max-1550', name: 'Intel Data Center GPU Max 1550', current: true },
  ]);
  assert.equal(list.current, 'max-1550');
  const items = devicePickItems(list);
  assert.deepEqual(items.map((i) => i.id), ['max-1550', 'arc-pro-b70']);
  assert.match(items[0].label, /check/);
  assert.equal(items[1].detail, 'intel · xe2');
});

test('a {devices, current} object and bare ids are read too', () => {
  const list = parseDevices({ devices: ['h100', 'arc-b580'], current: 'arc-b580' });
  assert.deepEqual(list.devices.map((d) => [d.id, d.current]), [['h100', false], ['arc-b580', true]]);
});

test('garbage entries and duplicates are dropped, never shown', () => {
  const list = parseDevices([null, 3, {}, { name: '' }, 'a770', 'a770', { id: 'a770' }]);
  assert.deepEqual(list.devices.map((d) => d.id), ['a770']);
  assert.deepEqual(parseDevices(undefined).devices, []);
  assert.deepEqual(parseDevices('nope').devices, []);
});

test("xeforge's own reply shape: selected flags plus device and toolchain", () => {
  const list = parseDevices({
    devices: [
      { id: 'arc-pro-b70', name: 'Intel Arc Pro B70', vendor: 'intel', arch: 'xe2', generation: 'bmg', selected: false },
      { id: 'max-1550', name: 'Intel Data Center GPU Max 1550', vendor: 'intel', arch: 'xe-hpc', selected: true },
    ],
    toolchains: ['xpu-3.6', 'xpu-3.7'],
    device: 'max-1550',
    toolchain: 'xpu-3.7',
  });
  assert.equal(list.current, 'max-1550');
  assert.equal(list.toolchain, 'xpu-3.7');
  assert.deepEqual(devicePickItems(list).map((i) => i.id), ['max-1550', 'arc-pro-b70']);
});
