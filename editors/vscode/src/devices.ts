// The `xeforge/devices` reply, which `xeforge.selectDevice` also answers with: the server's typed
// `DevicesResult` (server/src/lsp/handlers/configuration.rs). It is read as exactly that shape; a
// reply of any other shape is an error that names what is wrong, not a list guessed from it.

export interface DeviceInfo {
  id: string;
  name: string;
  vendor: string;
  arch: string;
  generation: string;
  selected: boolean;
}

export interface DevicesResult {
  devices: DeviceInfo[];
  toolchains: string[];
  /** The device in effect. */
  device: string;
  /** The toolchain in effect. */
  toolchain: string;
}

function fail(what: string): never {
  throw new Error(`unexpected xeforge/devices reply: ${what}`);
}

function string(o: Record<string, unknown>, key: string, where: string): string {
  const v = o[key];
  if (typeof v !== 'string') fail(`${where}.${key} is not a string`);
  return v;
}

function object(v: unknown, where: string): Record<string, unknown> {
  if (!v || typeof v !== 'object' || Array.isArray(v)) fail(`${where} is not an object`);
  return v as Record<string, unknown>;
}

export function parseDevices(reply: unknown): DevicesResult {
  const o = object(reply, 'the reply');
  if (!Array.isArray(o.devices)) fail('devices is not a list');
  if (!Array.isArray(o.toolchains) || !o.toolchains.every((t) => typeof t === 'string')) {
    fail('toolchains is not a list of strings');
  }
  const devices = o.devices.map((item, i): DeviceInfo => {
    const where = `devices[${i}]`;
    const d = object(item, where);
    if (typeof d.selected !== 'boolean') fail(`${where}.selected is not a boolean`);
    return {
      id: string(d, 'id', where),
      name: string(d, 'name', where),
      vendor: string(d, 'vendor', where),
      arch: string(d, 'arch', where),
      generation: string(d, 'generation', where),
      selected: d.selected,
    };
  });
  return {
    devices,
    toolchains: o.toolchains as string[],
    device: string(o, 'device', 'the reply'),
    toolchain: string(o, 'toolchain', 'the reply'),
  };
}

export interface PickItem {
  label: string;
  description?: string;
  detail?: string;
  id: string;
}

export function devicePickItems(list: DevicesResult): PickItem[] {
  // The current device first, so Enter keeps it.
  const ordered = [...list.devices].sort((a, b) => Number(b.selected) - Number(a.selected));
  return ordered.map((d) => ({
    label: d.selected ? `$(check) ${d.id}` : d.id,
    description: d.selected ? `${d.name} — current` : d.name,
    detail: [d.vendor, d.arch, d.generation].filter((p) => p !== '').join(' · '),
    id: d.id,
  }));
}
